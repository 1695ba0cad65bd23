/**
 * Paging the unmined query when the engine's pages are not repeatable (Aerospike: the same saved query state run
 * twice returns other records). A cursor's first read fixes its page in the cursor record, so a retried request
 * returns the same txids and next cursor, and paging with retries returns every txid exactly once.
 */
import fc from 'fast-check';
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

describe('iterateUnmined: bounded pages', () => {
  test('property: mining between pages and retried pages: every tx unmined throughout is listed exactly once, none twice, none mined before the start; a page never exceeds its limit', async () => {
    let height = 100;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 25 }),
        fc.array(
          fc.record({
            limit: fc.integer({ min: 1, max: 6 }),
            mine: fc.array(fc.nat(40), { maxLength: 4 }),
            retry: fc.boolean(),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.array(fc.nat(40), { maxLength: 5 }),
        async (count, steps, minedBefore) => {
          // a fresh set of txs; everything unmined from earlier runs is mined first
          await drainUnmined();
          const txids: string[] = [];
          for (let i = 0; i < count; i++) {
            const tx = rootTx();
            await store.create(tx.hex, { blockHeight: 5 });
            txids.push(tx.txid);
          }
          const mine = async (picks: number[]) => {
            const chosen = [...new Set(picks.map((n) => txids[n % count]))];
            if (chosen.length === 0) return;
            await store.setMined({ txids: chosen, blockId: ++height, blockHeight: height, subtreeIdx: 0 });
            chosen.forEach((t) => minedAt.add(t));
          };
          const minedAt = new Set<string>();
          await mine(minedBefore);
          const minedAtStart = new Set(minedAt);

          const listed: string[] = [];
          let cursor: string | undefined;
          let n = 0;
          let limit = steps[0].limit;
          for (;;) {
            const step = steps[n % steps.length];
            const page = await store.iterateUnmined({ limit, cursor });
            expect(page.txs.length).toBeLessThanOrEqual(limit);
            if (step.retry && cursor !== undefined) {
              // a retried request: the same txids, less those mined meanwhile
              const again = await store.iterateUnmined({ limit, cursor });
              expect(again.cursor).toEqual(page.cursor);
              expect(again.txs.map((t) => t.txid)).toEqual(page.txs.map((t) => t.txid).filter((t) => !minedAt.has(t)));
            }
            listed.push(...page.txs.map((t) => t.txid));
            await mine(step.mine);
            if (!page.cursor) break;
            cursor = page.cursor;
            n++;
            limit = steps[n % steps.length].limit;
            if (cursor !== undefined && n > 200) throw new Error('no end');
          }
          const ours = listed.filter((t) => txids.includes(t));
          expect(new Set(ours).size).toBe(ours.length);
          for (const t of txids) {
            if (!minedAt.has(t)) expect(ours).toContain(t);
            if (minedAtStart.has(t)) expect(ours).not.toContain(t);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  async function drainUnmined(): Promise<void> {
    const rest: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.iterateUnmined({ limit: 10000, cursor });
      rest.push(...page.txs.map((t) => t.txid));
      cursor = page.cursor;
    } while (cursor);
    if (rest.length > 0) await store.setMined({ txids: rest, blockId: 1, blockHeight: 6, subtreeIdx: 0 });
  }
});
