/**
 * The drill's replay and checks against a real store (the embedded engine with the real UDF module): a history made
 * as the drill's load makes it (seed txs, chains of spend-then-create, a refused rival now and then, a block every few
 * steps, the last txs left unmined), a "restore" that holds only what the store held part way through, then the
 * replay from a point before that (the overlap must answer as done) and every check the drill makes. Without the
 * replay the checks fail: they can.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { UtxoStoreError } from '../../lib/domain/errors';
import { loadConfig } from '../../lib/domain/config';
import { buildRuntime, type Runtime } from '../../lib/runtime';
import { checkStore, cleanupPasses } from '../../scripts/drill/checks';
import type { DrillEvent } from '../../scripts/drill/events';
import { readFinal } from '../../scripts/drill/records';
import { recoveryPoint, replayBatches } from '../../scripts/drill/recovery';
import { replay } from '../../scripts/drill/replay';
import { seedTx, spenderTx, type Utxo } from '../../scripts/drill/txs';

const dirs: string[] = [];
const runtimes: Runtime[] = [];

async function open(): Promise<Runtime> {
  const dir = mkdtempSync(path.join(tmpdir(), 'drill-replay-'));
  dirs.push(dir);
  const runtime = await buildRuntime(
    loadConfig({
      UTXO_STORE: 'embedded::memory:',
      BLOB_STORE: `file:${dir}`,
      SIGNAL_QUEUE: 'inline',
      BLOCK_HEIGHT_RETENTION: '2',
      CLEANUP_SAFETY_WINDOW: '2',
    }),
  );
  runtimes.push(runtime);
  return runtime;
}

afterAll(async () => {
  for (const r of runtimes) await r.engine.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The load's history, on `runtime`'s store, with a clock that ticks once per event. */
async function makeHistory(runtime: Runtime): Promise<DrillEvent[]> {
  const { store } = runtime;
  let clock = 0;
  const events: DrillEvent[] = [];
  const at = () => ({ client: 'load', mode: 'single' as const, start: ++clock, end: ++clock });
  const seeds = [seedTx(1, 4, 1_000_000), seedTx(2, 4, 1_000_000)];
  for (const s of seeds) {
    await store.create(s.hex);
    events.push({ kind: 'create', txid: s.txid, hex: s.hex, ...at(), answer: 'ok' });
  }
  let height = (await store.getChainTip()) + 1;
  let blockId = 1;
  const mine = async (txids: string[]) => {
    await store.setMined({ txids, blockId, blockHeight: height, subtreeIdx: 0 });
    events.push({
      kind: 'setMined',
      txids,
      blockId: blockId++,
      blockHeight: height++,
      ...at(),
      mode: 'batch',
      answer: 'ok',
    });
  };
  await mine(seeds.map((s) => s.txid));
  const pool: Utxo[] = seeds.flatMap((s) => s.outputs);
  let unmined: string[] = [];
  for (let step = 1; step <= 24; step++) {
    const u = pool.shift()!;
    const child = spenderTx(u);
    const inputs = [{ txid: u.txid, vout: u.vout }];
    await store.spend({ tx: child.hex });
    events.push({ kind: 'spend', spender: child.txid, inputs, hex: child.hex, ...at(), answer: 'ok' });
    if (step % 6 === 0) {
      const rival = spenderTx(u, 1);
      const refused = await store.spend({ tx: rival.hex }).then(
        () => 'ok',
        (err: UtxoStoreError) => err.code,
      );
      expect(refused).toBe('SPENT');
      events.push({
        kind: 'spend',
        spender: rival.txid,
        inputs,
        hex: rival.hex,
        ...at(),
        answer: 'refused',
        code: 'SPENT',
      });
    }
    await store.create(child.hex);
    events.push({ kind: 'create', txid: child.txid, hex: child.hex, ...at(), answer: 'ok' });
    pool.push(...child.outputs);
    unmined.push(child.txid);
    if (step % 5 === 0) {
      await mine(unmined);
      unmined = [];
    }
  }
  return events;
}

test('a restore that lacks the last writes, the replay from before the backup began, and every check of the drill', async () => {
  const lost = await open();
  const events = await makeHistory(lost);
  const lossMs = events[events.length - 1].end + 1;
  // the backup's scan saw the store as it was after 60 % of the history; it began a little before
  const seen = Math.floor(events.length * 0.6);
  const backupStartMs = events[seen - 8].end;

  const restored = await open();
  const asBackedUp = await replay(restored.store, replayBatches(events.slice(0, seen), -Infinity));
  expect(asBackedUp.failures).toEqual([]);
  const rp = recoveryPoint(events, await readFinal(restored.store, events), backupStartMs, lossMs);
  expect(rp.missingBefore).toEqual({ creates: 0, spends: 0, blocks: 0 });
  expect(rp.missing.creates + rp.missing.spends).toBeGreaterThan(10);
  expect(rp.since.creates).toBeGreaterThan(rp.missing.creates);

  // without the replay the checks find what is missing
  const unreplayed = await checkStore(restored, events);
  expect(unreplayed.ok).toBe(false);
  expect(unreplayed.history.creates.lost.length).toBe(rp.missing.creates);

  const replayed = await replay(restored.store, replayBatches(events, backupStartMs));
  expect(replayed.failures).toEqual([]);
  // the writes the backup already held answer as done: TX_EXISTS, a spend by the same tx OK
  expect(replayed.creates.exists).toBe(rp.since.creates - rp.missing.creates);
  expect(replayed.creates.ok).toBe(rp.missing.creates);
  expect(replayed.spends.ok).toBe(rp.since.spends);
  expect(replayed.blocks.ok).toBe(rp.since.blocks);

  const check = await checkStore(restored, events);
  expect(check.history.creates.lost).toEqual([]);
  expect(check.history.lostSpends).toEqual([]);
  expect(check.history.mined.lost).toEqual([]);
  expect(check.history.doubleAcknowledged).toEqual([]);
  expect(check.verified).toEqual({ checked: 26, lost: 0 });
  expect(check.dah).toEqual([]);
  expect(check.ok).toBe(true);

  const cleaned = await cleanupPasses(restored, events, check.final);
  expect(cleaned.violations).toEqual({ unsafe: [], owed: [] });
  expect(cleaned.deleted).toBeGreaterThan(10);
  // the last txs are unmined: their parents stay
  expect(cleaned.passes[0].kept.child_unmined).toBeGreaterThan(0);
  expect(cleaned.ok).toBe(true);
});
