/**
 * A fake transport serving the batch routes the way issue 11 specifies them (200 {results: [...]}, one outcome per
 * item, in order), over a tiny in-memory model of outputs: enough to test automatic batching, per-item outcomes and
 * block jobs in the client without the server's batch routes.
 */
import type { Transport, TransportRequest, TransportResponse } from '@bsv-utxo-store/client';

export interface FakeOptions {
  /** delay of each answer, ms */
  delayMs?: number;
  /** answer this instead (e.g. a 503), by request number (1-based) */
  override?: (request: TransportRequest, n: number) => TransportResponse | undefined;
}

/** txid of a fake "tx": the spends route takes strings "<txid>:<parentTxid>:<vout>". */
export function fakeSpend(txid: string, parent: string, vout: number): string {
  return `${txid}:${parent}:${vout}`;
}

export class FakeBatchServer implements Transport {
  readonly requests: TransportRequest[] = [];
  private inFlight = 0;
  peakInFlight = 0;
  /** outpoint -> spender */
  readonly spent = new Map<string, string>();

  constructor(private readonly options: FakeOptions = {}) {}

  async send(request: TransportRequest): Promise<TransportResponse> {
    this.requests.push(request);
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    try {
      if (this.options.delayMs) await new Promise((r) => setTimeout(r, this.options.delayMs));
      const over = this.options.override?.(request, this.requests.length);
      if (over) return over;
      return this.answer(request);
    } finally {
      this.inFlight--;
    }
  }

  private answer(request: TransportRequest): TransportResponse {
    const body = request.body as Record<string, unknown>;
    switch (`${request.method} ${request.path}`) {
      case 'POST /v1/batch/spends':
        return { status: 200, body: { results: (body.txs as string[]).map((tx) => this.spendOne(tx)) } };
      case 'POST /v1/batch/txs':
        return {
          status: 200,
          body: {
            results: (body.txs as { tx: string }[]).map((t) =>
              t.tx === 'bad'
                ? {
                    statusCode: 400,
                    body: { error: { code: 'INVALID_ARGUMENT', message: 'tx: bad', details: { field: 'tx' } } },
                  }
                : {
                    statusCode: 201,
                    body: { txid: t.tx, fee: 0, sizeInBytes: 10, extendedSize: 10, external: false, records: 1 },
                  },
            ),
          },
        };
      case 'POST /v1/batch/get':
        return {
          status: 200,
          body: {
            results: (body.txids as string[]).map((txid) =>
              txid.startsWith('missing')
                ? { error: { code: 'TX_NOT_FOUND', message: `transaction ${txid} not found`, details: { txid } } }
                : { txid, fee: txid.length },
            ),
          },
        };
      case 'POST /v1/batch/utxos':
        return {
          status: 200,
          body: {
            results: (body.utxos as { txid: string; vout: number }[]).map((u) => {
              const spender = this.spent.get(`${u.txid}:${u.vout}`);
              return spender ? { status: 'SPENT', spendingTxid: spender, vin: 0 } : { status: 'OK' };
            }),
          },
        };
      case 'POST /v1/mined':
        return {
          status: 200,
          body: { blockIds: Object.fromEntries((body.txids as string[]).map((t) => [t, [body.blockId as number]])) },
        };
      default:
        return { status: 404, body: { error: { code: 'ROUTE_NOT_FOUND', message: `no route ${request.path}` } } };
    }
  }

  private spendOne(tx: string): unknown {
    const [txid, parent, vout] = tx.split(':');
    const key = `${parent}:${vout}`;
    const spender = this.spent.get(key);
    if (spender !== undefined && spender !== txid) {
      const outcome = {
        txid: parent,
        vout: Number(vout),
        status: 'ERROR',
        code: 'SPENT',
        spendingTxid: spender,
        vin: 0,
      };
      return {
        statusCode: 409,
        body: {
          error: {
            code: 'SPENT',
            message: `Already spent by ${spender}`,
            details: { txid: parent, vout: Number(vout), spendingTxid: spender, vin: 0, spends: [outcome] },
          },
        },
      };
    }
    this.spent.set(key, txid);
    return { statusCode: 200, body: { spends: [{ txid: parent, vout: Number(vout), status: 'OK' }] } };
  }
}
