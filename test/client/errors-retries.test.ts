/**
 * Typed errors for every code the API answers (decoded from the envelope, with their class, status and details),
 * API Gateway's own answers, per-item batch outcomes, and the retry policy: 503 retried for idempotent operations
 * only, 409 never, 429 and unsent requests always, with jittered backoff.
 */
import * as net from 'net';
import { STORE_ERROR_CODES } from '../../lib/domain/errors';
import {
  ApiError,
  backoffMs,
  ConflictError,
  decodeBatchItem,
  errorFromResponse,
  HttpTransport,
  InvalidArgumentError,
  isApiError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceError,
  StorageError,
  ThrottledError,
  TransportError,
  TxExistsError,
  UtxoStoreClient,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from '@bsv-utxo-store/client';
import { mapError, HttpError, HTTP_ERROR_CODES } from '../../lib/http/errors';
import { UtxoStoreError } from '../../lib/domain/errors';

function classOf(code: string): unknown {
  if (code === 'INVALID_ARGUMENT' || code === 'INVALID_PARAMETER' || code === 'BAD_FRAME') return InvalidArgumentError;
  if (code.endsWith('NOT_FOUND')) return NotFoundError;
  if (code === 'TX_EXISTS') return TxExistsError;
  if (code.endsWith('TOO_LARGE') || code === 'TOO_MANY_OUTPUTS') return PayloadTooLargeError;
  if (code === 'STORAGE_ERROR') return StorageError;
  if (['UTXO_INVALID_SIZE', 'METHOD_NOT_ALLOWED', 'CONFIG_ERROR', 'INTERNAL_ERROR', 'FIELD_NOT_ALLOWED'].includes(code))
    return ServiceError;
  return ConflictError;
}

describe('typed errors', () => {
  test.each([...STORE_ERROR_CODES])(
    'store code %s: the server envelope decodes to its class with status and details',
    (code) => {
      const details = { txid: 'aa'.repeat(32), vout: 3, spendingTxid: 'bb'.repeat(32), vin: 1 };
      const mapped = mapError(new UtxoStoreError(code, `failed: ${code}`, details));
      const err = errorFromResponse(mapped.statusCode, mapped.body, 'op');
      expect(err).toBeInstanceOf(classOf(code));
      expect(err).toBeInstanceOf(ApiError);
      expect({ code: err.code, status: err.status, message: err.message, operation: err.operation }).toEqual({
        code,
        status: mapped.statusCode,
        message: `failed: ${code}`,
        operation: 'op',
      });
      expect({ txid: err.txid, vout: err.vout, spender: err.spendingTxid }).toEqual({
        txid: details.txid,
        vout: 3,
        spender: details.spendingTxid,
      });
      expect(isApiError(err, code)).toBe(true);
    },
  );

  test.each([...HTTP_ERROR_CODES])('HTTP code %s decodes to its class', (code) => {
    const status = {
      INVALID_ARGUMENT: 400,
      BAD_FRAME: 400,
      FIELD_NOT_ALLOWED: 403,
      PAYLOAD_TOO_LARGE: 413,
      RESPONSE_TOO_LARGE: 413,
      ROUTE_NOT_FOUND: 404,
    }[code as string];
    const mapped = mapError(
      new HttpError(status ?? 500, code, 'x', code === 'INVALID_ARGUMENT' ? { field: 'tx' } : {}),
    );
    const err = errorFromResponse(mapped.statusCode, mapped.body);
    expect(err).toBeInstanceOf(classOf(code));
    expect(err.code).toBe(code);
    if (code === 'INVALID_ARGUMENT') expect((err as InvalidArgumentError).field).toBe('tx');
  });

  test("API Gateway's and Lambda's own answers get client codes", () => {
    expect(errorFromResponse(429, { message: 'Too Many Requests' })).toBeInstanceOf(ThrottledError);
    expect(errorFromResponse(403, { message: 'Missing Authentication Token' })).toMatchObject({
      code: 'FORBIDDEN',
      message: 'Missing Authentication Token',
    });
    expect(errorFromResponse(502, { message: 'Internal server error' }).code).toBe('BAD_GATEWAY');
    expect(errorFromResponse(504, { message: 'Endpoint request timed out' }).code).toBe('GATEWAY_TIMEOUT');
    expect(errorFromResponse(500, undefined).code).toBe('UNEXPECTED_RESPONSE');
  });

  test('batch items: success values and per-item errors in each accepted shape', () => {
    expect(decodeBatchItem({ statusCode: 201, body: { txid: 'a' } }, 'createMany')).toEqual({
      ok: true,
      value: { txid: 'a' },
    });
    expect(decodeBatchItem({ status: 'OK' }, 'getUtxoMany')).toEqual({ ok: true, value: { status: 'OK' } });
    const spent = decodeBatchItem(
      { statusCode: 409, body: { error: { code: 'SPENT', message: 'm', details: { txid: 't', vout: 1 } } } },
      'spendMany',
    );
    expect(!spent.ok && spent.error).toBeInstanceOf(ConflictError);
    expect(!spent.ok && spent.error).toMatchObject({ code: 'SPENT', status: 409, txid: 't', vout: 1 });
    const missing = decodeBatchItem(
      { error: { code: 'TX_NOT_FOUND', message: 'm', details: { txid: 't' } } },
      'getMany',
    );
    expect(!missing.ok && missing.error).toMatchObject({ code: 'TX_NOT_FOUND', status: 404 });
    const storage = decodeBatchItem({ status: 503, error: { code: 'STORAGE_ERROR', message: 'm' } }, 'getMany');
    expect(!storage.ok && storage.error).toBeInstanceOf(StorageError);
  });
});

/** A transport answering from a script, counting requests. */
class Scripted implements Transport {
  readonly sent: TransportRequest[] = [];
  constructor(private readonly script: (n: number) => TransportResponse | Error) {}
  async send(request: TransportRequest): Promise<TransportResponse> {
    this.sent.push(request);
    const next = this.script(this.sent.length);
    if (next instanceof Error) throw next;
    return next;
  }
}

const storage503: TransportResponse = { status: 503, body: { error: { code: 'STORAGE_ERROR', message: 'timeout' } } };
const spendOk: TransportResponse = { status: 200, body: { spends: [] } };
const ok: TransportResponse = { status: 200, body: { status: 'OK' } };
const outpoint = { txid: 'aa'.repeat(32), vout: 0, utxoHash: 'bb'.repeat(32) };

describe('retries', () => {
  const client = (t: Transport, attempts = 4) =>
    new UtxoStoreClient({ transport: t, retry: { attempts, baseMs: 1 }, batching: false });

  test('503 on an idempotent operation (spend) is retried until it succeeds', async () => {
    const t = new Scripted((n) => (n < 3 ? storage503 : spendOk));
    expect(await client(t).spend('00')).toEqual({ spends: [] });
    expect(t.sent).toHaveLength(3);
  });

  test('503 is retried at most `attempts` times, then thrown typed', async () => {
    const t = new Scripted(() => storage503);
    await expect(client(t, 3).spend('00')).rejects.toBeInstanceOf(StorageError);
    expect(t.sent).toHaveLength(3);
  });

  test('409 is never retried', async () => {
    const t = new Scripted(() => ({ status: 409, body: { error: { code: 'SPENT', message: 'spent' } } }));
    await expect(client(t).spend('00')).rejects.toBeInstanceOf(ConflictError);
    expect(t.sent).toHaveLength(1);
  });

  test('503 on a non-idempotent operation (freeze) is not retried: the freeze may have happened', async () => {
    const t = new Scripted(() => storage503);
    await expect(client(t).freeze([outpoint])).rejects.toBeInstanceOf(StorageError);
    expect(t.sent).toHaveLength(1);
  });

  test('429 and a request never sent are retried for any operation', async () => {
    const throttled = new Scripted((n) => (n === 1 ? { status: 429, body: { message: 'Too Many Requests' } } : ok));
    await client(throttled).freeze([outpoint]);
    expect(throttled.sent).toHaveLength(2);
    const refused = new Scripted((n) => (n === 1 ? new TransportError('ECONNREFUSED', false) : ok));
    await client(refused).freeze([outpoint]);
    expect(refused.sent).toHaveLength(2);
  });

  test('a connection lost after sending: retried for spend, not for freeze', async () => {
    const lostSpend = new Scripted((n) => (n === 1 ? new TransportError('socket hang up', true) : spendOk));
    await client(lostSpend).spend('00');
    expect(lostSpend.sent).toHaveLength(2);
    const lostFreeze = new Scripted(() => new TransportError('socket hang up', true));
    await expect(client(lostFreeze).freeze([outpoint])).rejects.toBeInstanceOf(TransportError);
    expect(lostFreeze.sent).toHaveLength(1);
  });

  test('a refused connection is a TransportError that was not sent', async () => {
    // a port that was free a moment ago: nothing listens on it
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const t = new HttpTransport({ baseUrl: `http://127.0.0.1:${port}` });
    const err = await client(t, 1)
      .getChainTip()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).sent).toBe(false);
  });

  test('a degraded health report (503 with the report) is a report, not an error, and not retried', async () => {
    const degraded = { status: 'degraded', engine: 'embedded: down', blobStore: 'file: ok', queue: 'inline: ok' };
    const t = new Scripted(() => ({ status: 503, body: degraded }));
    expect(await client(t).health()).toEqual(degraded);
    expect(t.sent).toHaveLength(1);
  });

  test('a batch answer with the wrong number of results is UNEXPECTED_RESPONSE, not retried', async () => {
    const t = new Scripted(() => ({ status: 200, body: { results: [{ status: 'OK' }] } }));
    const err = await client(t)
      .getUtxoMany([
        { txid: 'a', vout: 0 },
        { txid: 'b', vout: 0 },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ code: 'UNEXPECTED_RESPONSE' });
    expect(t.sent).toHaveLength(1);
  });

  test('backoff is full jitter within an exponential ceiling', () => {
    expect(backoffMs(1, { baseMs: 50, random: () => 1 })).toBe(50);
    expect(backoffMs(3, { baseMs: 50, random: () => 1 })).toBe(200);
    expect(backoffMs(10, { baseMs: 50, maxMs: 2000, random: () => 1 })).toBe(2000);
    expect(backoffMs(3, { baseMs: 50, random: () => 0.5 })).toBe(100);
    expect(backoffMs(3, { baseMs: 50, random: () => 0 })).toBe(0);
  });
});
