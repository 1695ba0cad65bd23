/**
 * What each function's IAM role grants (cdk/functions.ts FUNCTION_TABLE: blob actions, sending signals) covers what
 * its routes really do. Every function serves its own routes here, through its own handler (direct invocation, which
 * refuses another function's routes), on one shared runtime whose blob store and signal queue note which function
 * touched them: each blob call is translated into the S3 actions lib/blob/s3-blob-store.ts sends for it, and the
 * signal handler (the reconciler) runs as the `signals` function, as it does behind SQS. A call the function's role
 * would not be allowed is a violation: in AWS it would be AccessDenied (a 503, or a signal lost in the cleanup pass).
 * Every tx is external (EXTERNALIZE_ALL), so every read, write, tag and delete of a tx goes to the blob store.
 */
import './powertools-env';
import { AsyncLocalStorage } from 'async_hooks';
import { blobObjectActions, FUNCTION_TABLE } from '../../cdk/functions';
import type { FunctionName } from '../../cdk/config';
import { handler as admin } from '../../functions/admin';
import { handler as cleanup } from '../../functions/cleanup';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { handler as getUtxo } from '../../functions/get-utxo';
import { handler as setMined } from '../../functions/set-mined';
import { handler as spend } from '../../functions/spend';
import { handler as status } from '../../functions/status';
import { handler as unspend } from '../../functions/unspend';
import type { BlobStore } from '../../lib/blob/port';
import type { DirectInvocation, DirectResult } from '../../lib/http/direct-invocation';
import { getRuntime } from '../../lib/runtime';
import type { Signal } from '../../lib/signals/port';
import { makeTx, rootTx, spendItem, utxoHashOf } from '../fixtures/txs';
import { captureStdout, lambdaContext, scheduledEvent } from './events';
import { useTestRuntime } from './runtime-env';

/** The S3 actions each BlobStore call needs (lib/blob/s3-blob-store.ts: HeadObject needs s3:GetObject). */
const S3_ACTIONS: Record<Exclude<keyof BlobStore, 'kind'>, string[]> = {
  put: ['s3:GetObject', 's3:PutObject'], // HeadObject first, GetObject to compare an existing blob
  get: ['s3:GetObject'],
  exists: ['s3:GetObject', 's3:ListBucket'], // HeadObject; HeadBucket tells a missing blob from a missing bucket
  delete: ['s3:GetObject', 's3:DeleteObject', 's3:ListBucket'],
  setDeleteAtHeight: ['s3:GetObjectTagging', 's3:PutObjectTagging'],
  getDeleteAtHeight: ['s3:GetObjectTagging'],
  ping: ['s3:ListBucket'],
};

function granted(fn: FunctionName): Set<string> {
  const actions = blobObjectActions(FUNCTION_TABLE[fn]);
  return new Set(FUNCTION_TABLE[fn].blobs.length > 0 ? [...actions, 's3:ListBucket'] : []);
}

const caller = new AsyncLocalStorage<FunctionName>();
const violations: string[] = [];
const used = new Map<FunctionName, Set<string>>();
const sentBy = new Set<FunctionName>();

function note(fn: FunctionName | undefined, action: string, what: string): void {
  if (!fn) {
    violations.push(`${what} outside any function`);
    return;
  }
  if (!used.has(fn)) used.set(fn, new Set());
  used.get(fn)!.add(action);
  const allowed = action === 'sqs:SendMessage' ? FUNCTION_TABLE[fn].sendsSignals : granted(fn).has(action);
  if (!allowed) violations.push(`${fn}: ${action} (${what})`);
}

useTestRuntime('fn-iam', 'embedded::memory:', { EXTERNALIZE_ALL: 'true', BLOCK_HEIGHT_RETENTION: '2' });

beforeAll(async () => {
  const runtime = await getRuntime();
  const blobs = runtime.blobs as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of Object.keys(S3_ACTIONS) as (keyof typeof S3_ACTIONS)[]) {
    const original = blobs[method].bind(runtime.blobs);
    blobs[method] = (...args: unknown[]) => {
      for (const action of S3_ACTIONS[method]) note(caller.getStore(), action, `blobs.${method}`);
      return original(...args);
    };
  }
  const queue = runtime.queue as unknown as { send(signals: Signal[]): Promise<void> };
  const send = queue.send.bind(runtime.queue);
  queue.send = (signals: Signal[]) => {
    if (signals.length > 0) {
      note(caller.getStore(), 'sqs:SendMessage', signals.map((s) => s.signal).join(','));
      sentBy.add(caller.getStore()!);
    }
    return send(signals);
  };
  // behind SQS the reconciler runs in the signals function
  const reconciler = runtime.reconciler as unknown as { handle(signal: Signal): Promise<void> };
  const handle = reconciler.handle.bind(runtime.reconciler);
  reconciler.handle = (signal: Signal) => caller.run('signals', () => handle(signal));
});

type Handler = (event: DirectInvocation, context: ReturnType<typeof lambdaContext>) => Promise<DirectResult>;
const HANDLERS: Partial<Record<FunctionName, Handler>> = {
  create: create as Handler,
  get: get as Handler,
  spend: spend as Handler,
  unspend: unspend as Handler,
  setMined: setMined as Handler,
  getUtxo: getUtxo as Handler,
  status: status as Handler,
  admin: admin as Handler,
};

/** Invokes `route` on function `fn` and expects `status`. */
async function call(fn: FunctionName, route: string, options: Partial<DirectInvocation>, status: number) {
  const { result } = await caller.run(fn, () =>
    captureStdout(() => HANDLERS[fn]!({ route, ...options } as DirectInvocation, lambdaContext())),
  );
  expect([route, result.statusCode, result.statusCode === status ? '' : result.body]).toEqual([route, status, '']);
  return result.body as Record<string, unknown>;
}

test("every function's routes stay within what its IAM role grants: blob actions and sending signals", async () => {
  const tip = 1000;
  await call('admin', 'PUT /v1/chain/tip/force', { body: { height: tip } }, 200);
  await call('status', 'GET /v1/health', {}, 200);
  await call('status', 'GET /v1/chain/tip', {}, 200);

  // create: the parent, a tx for the batch route, one marked conflicting at creation (tags its blob)
  const parent = rootTx(2);
  const other = rootTx(1);
  const doomed = rootTx(1);
  await call('create', 'POST /v1/txs', { body: { tx: parent.hex } }, 201);
  await call('create', 'POST /v1/batch/txs', { body: { txs: [{ tx: other.hex }, { tx: doomed.hex }] } }, 200);
  const rival = rootTx(1);
  await call('create', 'POST /v1/txs', { body: { tx: rival.hex, conflicting: true } }, 201);

  // reads of external txs
  await call('get', 'GET /v1/txs/{txid}', { pathParameters: { txid: parent.txid } }, 200);
  await call('get', 'POST /v1/batch/get', { body: { txids: [parent.txid, other.txid] } }, 200);
  await call('get', 'POST /v1/batch/outputs', { body: { outpoints: [{ txid: parent.txid, vout: 0 }] } }, 200);
  await call('get', 'GET /v1/unmined/txs', {}, 200);
  await call('getUtxo', 'GET /v1/utxos/{txid}/{vout}', { pathParameters: { txid: parent.txid, vout: '0' } }, 200);
  await call(
    'getUtxo',
    'POST /v1/batch/utxos',
    { body: { utxos: [{ txid: parent.txid, vout: 1, utxoHash: utxoHashOf(parent, 1) }] } },
    200,
  );

  // a child spends both outputs (the parent becomes fully spent), is unspent and spent again
  const child = makeTx({ inputs: [0, 1].map((vout) => ({ parent, vout })) });
  await call('create', 'POST /v1/txs', { body: { tx: child.hex } }, 201);
  await call('spend', 'POST /v1/batch/spends', { body: { txs: [child.hex] } }, 200);
  await call('get', 'GET /v1/txs/{txid}/conflicting-children', { pathParameters: { txid: parent.txid } }, 200);
  await call('get', 'GET /v1/txs/{txid}/counter-conflicting', { pathParameters: { txid: child.txid } }, 200);
  await call(
    'unspend',
    'POST /v1/unspends',
    { body: { spends: [spendItem(parent, 0, child, 0), spendItem(parent, 1, child, 1)] } },
    200,
  );
  await call('spend', 'POST /v1/spends', { body: { tx: child.hex } }, 200);

  // both mined: the parent's delete-at-height is set (reconciler: tags its blob); one preserved for a while
  const mined = { blockId: 1, blockHeight: tip + 1, subtreeIdx: 0 };
  await call('setMined', 'POST /v1/mined', { body: { txids: [parent.txid, child.txid], ...mined } }, 200);
  await call('setMined', 'POST /v1/longest-chain', { body: { txids: [child.txid], onLongestChain: true } }, 200);
  await call('admin', 'POST /v1/preserve', { body: { txids: [parent.txid], untilHeight: tip + 5 } }, 200);
  await call('admin', 'POST /v1/conflicting', { body: { txids: [other.txid], conflicting: true } }, 200);
  await call('admin', 'DELETE /v1/txs/{txid}', { pathParameters: { txid: doomed.txid } }, 204);

  // cleanup: the preservation expires (DAHSET signal from the cleanup function), then the parent is deleted
  await call('admin', 'PUT /v1/chain/tip/force', { body: { height: tip + 10 } }, 200);
  await caller.run('cleanup', () => captureStdout(() => cleanup(scheduledEvent(), lambdaContext(60_000))));
  await call('admin', 'PUT /v1/chain/tip/force', { body: { height: tip + 100 } }, 200);
  await caller.run('cleanup', () => captureStdout(() => cleanup(scheduledEvent(), lambdaContext(60_000))));
  await call('get', 'GET /v1/txs/{txid}', { pathParameters: { txid: parent.txid } }, 404);

  expect(violations).toEqual([]);
  // the scenario reached what each grant is for (so a missing grant would have shown above)
  expect([...(used.get('create') ?? [])]).toEqual(expect.arrayContaining(['s3:PutObject', 's3:PutObjectTagging']));
  expect([...(used.get('get') ?? [])]).toContain('s3:GetObject');
  expect([...(used.get('signals') ?? [])]).toContain('s3:PutObjectTagging');
  expect([...(used.get('admin') ?? [])]).toEqual(expect.arrayContaining(['s3:DeleteObject', 's3:ListBucket']));
  expect([...(used.get('status') ?? [])]).toEqual(['s3:ListBucket']);
  expect([...(used.get('cleanup') ?? [])]).toEqual(expect.arrayContaining(['s3:DeleteObject', 'sqs:SendMessage']));
  expect([...sentBy].sort()).toEqual(expect.arrayContaining(['admin', 'cleanup', 'setMined']));
});
