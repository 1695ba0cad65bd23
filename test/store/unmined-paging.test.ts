/**
 * Paging the unmined query when the engine's pages are not repeatable (Aerospike: the same saved query state run
 * twice returns other records). A cursor's first read fixes its page in the cursor record, so a retried request
 * returns the same txids and next cursor, and paging with retries returns every txid exactly once.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { FileBlobStore } from '../../lib/blob';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import type { RecordEngine } from '../../lib/engine/port';
import { InlineQueue } from '../../lib/signals';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { UtxoStore } from '../../lib/store/types';
import { BASE_SETTINGS } from './store-contract';
import { rootTx } from '../fixtures/txs';
import { nonRepeatablePaging } from './doubles';

let dir: string;
let inner: RecordEngine;
let store: UtxoStore;
const created: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'unmined-paging-'));
  inner = await openEmbeddedEngine({ path: ':memory:' });
  store = await createUtxoStore({
    engine: nonRepeatablePaging(inner),
    blobs: new FileBlobStore({ dir }),
    signals: new InlineQueue(),
    settings: BASE_SETTINGS,
  });
  await store.setChainTip(10);
  for (let i = 0; i < 11; i++) {
    const tx = rootTx();
    await store.create(tx.hex, { blockHeight: 5 });
    created.push(tx.txid);
  }
});

afterAll(async () => {
  await inner.close();
  rmSync(dir, { recursive: true, force: true });
});

test('every page read twice (a retry) is the same page, and the pages together hold every txid once', async () => {
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.queryUnmined({ cutoff: 5, limit: 3, cursor });
    const retried = await store.queryUnmined({ cutoff: 5, limit: 3, cursor });
    if (cursor !== undefined) expect(retried).toEqual(page);
    seen.push(...page.txids);
    cursor = page.cursor;
    pages++;
  } while (cursor !== undefined && pages < 20);
  expect(cursor).toBeUndefined();
  expect([...seen].sort()).toEqual([...created].sort());
});

test('two first reads of one cursor racing answer one page', async () => {
  const first = await store.queryUnmined({ cutoff: 5, limit: 4 });
  const [a, b, c] = await Promise.all(
    [0, 1, 2].map(() => store.queryUnmined({ cutoff: 5, limit: 4, cursor: first.cursor })),
  );
  expect(b).toEqual(a);
  expect(c).toEqual(a);
  expect(a.txids).toHaveLength(4);
  expect(a.txids.filter((t) => first.txids.includes(t))).toEqual([]);
});

test('a cursor read again with another limit is refused, naming limit', async () => {
  const first = await store.queryUnmined({ cutoff: 5, limit: 2 });
  await store.queryUnmined({ cutoff: 5, limit: 2, cursor: first.cursor });
  await expect(store.queryUnmined({ cutoff: 5, limit: 5, cursor: first.cursor })).rejects.toMatchObject({
    code: 'INVALID_ARGUMENT',
    details: { field: 'limit' },
  });
});
