/**
 * lib/runtime.ts wires the signal queue into the cleanup service: the DAHSET that expirePreserve raises for an
 * external paginated tx reaches the reconciler, which gives the pagination records the master's deleteAtHeight and
 * tags the blob (docs/signals.md and docs/cleanup.md). Built with buildRuntime(loadConfig(env)) on the embedded engine, the
 * in-process queue and a file blob store, with B = 2 so that a tx with 5 outputs has two pagination records.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { BIN } from '../../lib/domain/bins';
import { loadConfig } from '../../lib/domain/config';
import { masterKey, paginationKey } from '../../lib/domain/keys';
import { txidToBytes } from '../../lib/domain/txid';
import { buildRuntime, type Runtime } from '../../lib/runtime';
import { makeTx, rootTx } from '../fixtures/txs';

const R = 10;
const SAFETY_WINDOW = 120;

let blobDir: string;
let runtime: Runtime;

beforeEach(async () => {
  blobDir = mkdtempSync(path.join(tmpdir(), 'fn-runtime-signals-'));
  runtime = await buildRuntime(
    loadConfig({
      UTXO_STORE: 'embedded::memory:',
      BLOB_STORE: `file:${blobDir}`,
      SIGNAL_QUEUE: 'inline',
      UTXO_BATCH_SIZE: '2',
      BLOCK_HEIGHT_RETENTION: String(R),
      CLEANUP_SAFETY_WINDOW: String(SAFETY_WINDOW),
      CLEANUP_BATCH_SIZE: '2',
    }),
  );
});

afterEach(async () => {
  await runtime.engine.close();
  rmSync(blobDir, { recursive: true, force: true });
});

async function dahOf(key: Buffer): Promise<unknown> {
  const record = await runtime.engine.get(key, [BIN.deleteAtHeight]);
  return record === null ? 'missing' : record.bins[BIN.deleteAtHeight];
}

test('an expired preserve of an external paginated tx: the DAHSET reaches the reconciler; cleanup then deletes it all', async () => {
  const { store, engine, blobs, cleanup, queue } = runtime;
  expect(queue.kind).toBe('inline');

  // a no-input tx with 5 outputs at B = 2: external (.outputs blob), master + 2 pagination records
  await store.setChainTip(100, { force: true });
  const parent = rootTx(5);
  await expect(store.create(parent.hex)).resolves.toMatchObject({ external: true, records: 3 });
  await store.setMined({ txids: [parent.txid], blockId: 1, blockHeight: 101, subtreeIdx: 0 });
  await store.preserve([parent.txid], 200);

  // two spenders take every output; both are mined
  const a = makeTx({ inputs: [0, 1, 2].map((vout) => ({ parent, vout })) });
  const b = makeTx({ inputs: [3, 4].map((vout) => ({ parent, vout })) });
  for (const child of [a, b]) {
    await store.create(child.hex);
    const { spends } = await store.spend({ tx: child.hex });
    expect(spends.map((s) => s.status)).toEqual(child === a ? ['OK', 'OK', 'OK'] : ['OK', 'OK']);
  }
  await store.setMined({ txids: [a.txid, b.txid], blockId: 2, blockHeight: 102, subtreeIdx: 0 });

  const txid = txidToBytes(parent.txid, 'txid');
  const keys = [masterKey(txid), paginationKey(txid, 1), paginationKey(txid, 2)];
  const dahs = () => Promise.all(keys.map(dahOf));
  const blobTag = () => blobs.getDeleteAtHeight(parent.txid, 'outputs');

  // fully spent and mined, but preserved: no deleteAtHeight anywhere
  await expect(store.get(parent.txid, ['spentExtraRecs', 'preserveUntil'])).resolves.toMatchObject({
    spentExtraRecs: 2,
    preserveUntil: 200,
  });
  expect(await dahs()).toEqual([undefined, undefined, undefined]);
  expect(await blobTag()).toBeNull();
  expect(await cleanup.runPass({ tip: 199 })).toMatchObject({ preserveExpired: 0, deleted: 0, errors: 0 });

  // the pass at the preserve expiry re-runs the DAH rule (DAHSET, external): pages and blob follow the master
  expect(await cleanup.runPass({ tip: 200 })).toMatchObject({ preserveExpired: 1, deleted: 0, errors: 0 });
  expect(await dahs()).toEqual([200 + R, 200 + R, 200 + R]);
  expect(await blobTag()).toBe(200 + R);

  // at DAH the spenders are not yet buried under the safety window: kept
  expect(await cleanup.runPass({ tip: 200 + R })).toMatchObject({
    deleted: 0,
    errors: 0,
    kept: { child_unstable: 1 },
  });
  expect(await blobs.exists(parent.txid, 'outputs')).toBe(true);

  // past the safety window of the spenders: master, pagination records and blob are deleted
  expect(await cleanup.runPass({ tip: 102 + SAFETY_WINDOW })).toMatchObject({
    deleted: 1,
    errors: 0,
    preserveExpired: 0,
    more: false,
  });
  expect(await engine.batchGet(keys)).toEqual([null, null, null]);
  expect(await blobs.exists(parent.txid, 'outputs')).toBe(false);
  await expect(store.get(parent.txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
  // the spenders stay
  for (const child of [a, b]) await expect(store.get(child.txid)).resolves.toMatchObject({ txid: child.txid });
  expect(await cleanup.runPass({ tip: 103 + SAFETY_WINDOW })).toMatchObject({ deleted: 0, errors: 0 });
});
