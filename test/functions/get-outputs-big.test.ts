/**
 * The review's reproduction of N5 at its own size, under the default settings: a tx of 330,000 outputs, then a batch
 * get of 8 copies with `utxos` (2,640,000 outputs) grew the process to 1.27 GB before its 413. Now it is 413
 * TOO_MANY_OUTPUTS from the masters alone: no pagination record is read, so no output is materialised. The tx is
 * created through the store (its hex, 6.6 MB, is over the body limit; the attack is the read).
 */
import './powertools-env';

import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { handler as get } from '../../functions/get';
import { BIN } from '../../lib/domain/bins';
import { getRuntime } from '../../lib/runtime';
import { apiEvent, captureStdout, lambdaContext } from './events';
import { useTestRuntime } from './runtime-env';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

useTestRuntime('fn-get-big');

const OUTPUTS = 330_000;

/** A tx without inputs and OUTPUTS outputs of 1 sat to OP_TRUE, written by hand (the SDK is slow at this size). */
function bigTx(): Buffer {
  const out = Buffer.alloc(4 + 1 + 5 + OUTPUTS * 10 + 4);
  let o = out.writeUInt32LE(1, 0);
  o = out.writeUInt8(0, o); // no inputs
  o = out.writeUInt8(0xfe, o);
  o = out.writeUInt32LE(OUTPUTS, o);
  for (let i = 0; i < OUTPUTS; i++) {
    o = out.writeBigUInt64LE(1n, o);
    o = out.writeUInt8(1, o);
    o = out.writeUInt8(0x51, o);
  }
  out.writeUInt32LE(process.pid, o);
  return out;
}

test('8 copies of a 330,000-output tx: 413 TOO_MANY_OUTPUTS before any output is read', async () => {
  const runtime = await getRuntime();
  const { txid } = await runtime.store.create(bigTx());
  const spy = jest.spyOn(runtime.engine, 'batchGet');
  const event = apiEvent({
    method: 'POST',
    resource: '/v1/batch/get',
    body: { txids: Array(8).fill(txid), fields: ['utxos'] },
  });
  const { result } = await captureStdout(() => (get as Handler)(event, lambdaContext()));
  // no record's slots are read: neither a pagination record nor the master's own 20,000
  const slotReads = spy.mock.calls.filter(([, bins]) => bins?.includes(BIN.utxos)).length;
  spy.mockRestore();
  expect(result.statusCode).toBe(413);
  expect(JSON.parse(result.body).error).toMatchObject({
    code: 'TOO_MANY_OUTPUTS',
    details: { outputs: 8 * OUTPUTS, limit: 50_000 },
  });
  expect(slotReads).toBe(0);
}, 60_000);
