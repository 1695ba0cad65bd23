/**
 * A get's answer is bounded before it is built (security review N5): with `utxos`, the outputs the answer would list
 * are summed from the masters' totalUtxos and more than MAX_GET_OUTPUTS is 413 TOO_MANY_OUTPUTS, before a pagination
 * record is read or an output's view made; with `tx`, the txs' bytes against MAX_GET_TX_BYTES (413 TXS_TOO_LARGE)
 * before a tx is read. The read path is counted: a refused batch reads the masters' sizes only.
 */
import './powertools-env';

import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { BIN } from '../../lib/domain/bins';
import { getRuntime } from '../../lib/runtime';
import { rootTx } from '../fixtures/txs';
import { apiEvent, captureStdout, lambdaContext, type ApiEventOptions } from './events';
import { useTestRuntime } from './runtime-env';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

// 100 outputs a record, so that a tx of a few hundred outputs has pagination records to (not) read
useTestRuntime('fn-get-cap', 'embedded::memory:', {
  MAX_GET_OUTPUTS: '1000',
  MAX_GET_TX_BYTES: '5000',
  UTXO_BATCH_SIZE: '100',
});

async function call(handler: Handler, options: ApiEventOptions) {
  const { result } = await captureStdout(() => handler(apiEvent(options), lambdaContext()));
  return { ...result, json: result.body ? JSON.parse(result.body) : undefined };
}

/**
 * Engine batch reads while `run` runs: of pagination records (`reads`: the utxos bin alone), and of any record's
 * utxos, inputs or outputs bins (`heavy`: what an answer is built from).
 */
async function pageReads<T>(run: () => Promise<T>): Promise<{ result: T; reads: number; heavy: number }> {
  const { engine } = await getRuntime();
  const spy = jest.spyOn(engine, 'batchGet');
  try {
    const result = await run();
    const reads = spy.mock.calls.filter(([, bins]) => bins?.length === 1 && bins[0] === BIN.utxos).length;
    const heavy = spy.mock.calls.filter(([, bins]) =>
      [BIN.utxos, BIN.inputs, BIN.outputs].some((b) => bins?.includes(b)),
    ).length;
    return { result, reads, heavy };
  } finally {
    spy.mockRestore();
  }
}

async function stored(outputs: number) {
  const f = rootTx(outputs);
  const reply = await call(create as Handler, { method: 'POST', resource: '/v1/txs', body: { tx: f.hex } });
  expect(reply.statusCode).toBe(201);
  return f;
}

describe('get with utxos: at most MAX_GET_OUTPUTS outputs per answer, refused before they are read', () => {
  test('a batch of copies of one tx (the review: 8 copies) is 413 TOO_MANY_OUTPUTS; no pagination record is read', async () => {
    const f = await stored(600);
    const { result, reads, heavy } = await pageReads(() =>
      call(get as Handler, {
        method: 'POST',
        resource: '/v1/batch/get',
        body: { txids: Array(8).fill(f.txid), fields: ['utxos'] },
      }),
    );
    expect(result.statusCode).toBe(413);
    expect(result.json.error).toMatchObject({
      code: 'TOO_MANY_OUTPUTS',
      details: { field: 'utxos', outputs: 4800, limit: 1000 },
    });
    expect(reads).toBe(0);
    // not even the masters' own slots: the batch was measured from its counts alone
    expect(heavy).toBe(0);
    // other fields of the same txids are not outputs: answered
    const fees = await call(get as Handler, {
      method: 'POST',
      resource: '/v1/batch/get',
      body: { txids: Array(8).fill(f.txid), fields: ['fee'] },
    });
    expect(fees.statusCode).toBe(200);
  });

  test('a single tx over the cap is 413 on GET /v1/txs/{txid}; within the cap every output is listed', async () => {
    const big = await stored(1001);
    const refused = await pageReads(() =>
      call(get as Handler, {
        method: 'GET',
        resource: '/v1/txs/{txid}',
        pathParameters: { txid: big.txid },
        query: { fields: 'utxos' },
      }),
    );
    expect(refused.result.statusCode).toBe(413);
    expect(refused.result.json.error).toMatchObject({ code: 'TOO_MANY_OUTPUTS', details: { outputs: 1001 } });
    expect(refused.reads).toBe(0);

    const f = await stored(500);
    const answered = await pageReads(() =>
      call(get as Handler, {
        method: 'POST',
        resource: '/v1/batch/get',
        body: { txids: [f.txid, f.txid], fields: ['utxos'] },
      }),
    );
    expect(answered.result.statusCode).toBe(200);
    expect(answered.result.json.results.map((r: { result: { utxos: unknown[] } }) => r.result.utxos.length)).toEqual([
      500, 500,
    ]);
    expect(answered.reads).toBeGreaterThan(0);
  });
});

describe('get with tx: at most MAX_GET_TX_BYTES of transactions per answer, refused before they are read', () => {
  test('8 copies of a tx over the cap together: 413 TXS_TOO_LARGE, no tx read; one copy is answered', async () => {
    const f = await stored(100);
    const size = Buffer.from(f.hex, 'hex').length;
    const refused = await pageReads(() =>
      call(get as Handler, {
        method: 'POST',
        resource: '/v1/batch/get',
        body: { txids: Array(8).fill(f.txid), fields: ['tx'] },
      }),
    );
    expect(refused.result.statusCode).toBe(413);
    expect(refused.result.json.error).toMatchObject({
      code: 'TXS_TOO_LARGE',
      details: { field: 'tx', bytes: 8 * size, limit: 5000 },
    });
    expect(refused.heavy).toBe(0);
    const one = await call(get as Handler, {
      method: 'GET',
      resource: '/v1/txs/{txid}',
      pathParameters: { txid: f.txid },
      query: { fields: 'tx' },
    });
    expect([one.statusCode, one.json.tx]).toEqual([200, f.hex]);
  });
});
