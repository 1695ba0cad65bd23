/**
 * A pass split over several invocations (docs/cleanup.md, "Shards"): runPass({ shard: { index, count } }) runs the
 * partition ranges r with r % count === index, each under its own range lock. Shards of one pass running side by side
 * delete what one whole pass deletes, each touching only its ranges; a range another pass holds is skipped and
 * reported busy while the others run.
 */
import { isCleanupLockKey, rangeLockKey } from '../../lib/cleanup/pass-lock';
import { txidBytes } from '../../lib/cleanup/record-facts';
import { partitionOf } from '../../lib/engine/embedded/embedded-engine';
import { splitPartitions, type PartitionRange, type RecordEngine } from '../../lib/engine/port';
import { DelegatingEngine } from './fakes';
import { closeHarnesses, harness, type Harness } from './harness';
import { newTxid } from './ledger';

afterEach(closeHarnesses);

const TIP = 1288;
const RANGES = splitPartitions(8);

const inRange = (range: PartitionRange, p: number): boolean => p >= range.begin && p < range.begin + range.count;
const rangeOf = (txid: string): number => RANGES.findIndex((r) => inRange(r, partitionOf(txidBytes(txid))));

/**
 * The same history in any harness: each `deletable` txid a mined parent whose one output is spent by a child mined
 * and stable at TIP; each `kept` txid a parent whose spending child is unmined.
 */
async function scene(h: Harness, deletable: string[], kept: string[]): Promise<void> {
  for (const txid of [...deletable, ...kept]) {
    await h.ledger.create(txid, 1, [], { height: 1 });
    await h.ledger.setMined(txid, h.parentBlock(txid), 900);
    const child = await h.child([{ txid, vout: 0 }], 1000);
    if (deletable.includes(txid)) await h.ledger.setMined(child, 7, 1000);
  }
}

async function existing(h: Harness, txids: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const t of txids) if (await h.ledger.exists(t)) out.push(t);
  return out;
}

/** A gate: `wait()` blocks until `open()`. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { wait: () => opened, open };
}

/** What a pass touched through this engine: the ranges it queried and the partitions of the records it removed. */
function watched(
  inner: RecordEngine,
  beforeQuery: () => Promise<void> = async () => {},
): { engine: RecordEngine; queried: Set<string>; removedPartitions: Set<number> } {
  const queried = new Set<string>();
  const removedPartitions = new Set<number>();
  const engine = new DelegatingEngine(inner, {
    queryRange: async (q, real) => {
      await beforeQuery();
      queried.add(`${q.partitions?.begin}+${q.partitions?.count}`);
      return real.queryRange(q);
    },
    batchRemove: async (items, real) => {
      for (const i of items) if (!isCleanupLockKey(i.key)) removedPartitions.add(partitionOf(i.key));
      return real.batchRemove(items);
    },
  });
  return { engine, queried, removedPartitions };
}

describe('cleanup shards', () => {
  test('two shards of one pass, run concurrently, delete exactly what one whole pass deletes, each in its ranges', async () => {
    const deletable = Array.from({ length: 24 }, () => newTxid());
    const kept = Array.from({ length: 6 }, () => newTxid());
    const all = [...deletable, ...kept];

    const whole = await harness();
    await scene(whole, deletable, kept);
    const wholeReport = await whole.service.runPass({ tip: TIP });
    expect(wholeReport).toMatchObject({ deleted: 24, errors: 0, more: false, kept: { child_unmined: 6 } });

    const split = await harness();
    await scene(split, deletable, kept);
    // both shards hold their locks at once: neither queries before the other has started
    let arrived = 0;
    const both = gate();
    const arrive = (): (() => Promise<void>) => {
      let first = true;
      return async () => {
        if (first && ++arrived === 2) both.open();
        first = false;
        await both.wait();
      };
    };
    const shards = [0, 1].map(() => watched(split.engine, arrive()));
    const reports = await Promise.all(
      shards.map((s, index) => split.serviceOver(s.engine).runPass({ tip: TIP, shard: { index, count: 2 } })),
    );
    for (const r of reports) {
      expect(r).toMatchObject({ errors: 0, more: false });
      expect(r.busy).toBeUndefined();
      expect(r.deleted).toBeGreaterThan(0);
    }
    expect(reports[0].deleted + reports[1].deleted).toBe(wholeReport.deleted);
    expect((reports[0].kept.child_unmined ?? 0) + (reports[1].kept.child_unmined ?? 0)).toBe(6);
    expect(await existing(split, all)).toEqual(await existing(whole, all));
    expect(await existing(split, all)).toEqual(kept);

    shards.forEach((s, index) => {
      const own = RANGES.filter((_, r) => r % 2 === index);
      expect([...s.queried].sort()).toEqual(own.map((r) => `${r.begin}+${r.count}`).sort());
      for (const p of s.removedPartitions) expect(own.some((r) => inRange(r, p))).toBe(true);
    });
    // every lock released; nothing left for a whole pass
    for (const range of RANGES) expect(await split.engine.get(rangeLockKey(range))).toBeNull();
    expect(await split.service.runPass({ tip: TIP })).toMatchObject({ deleted: 0, errors: 0, more: false });
  });

  test('a range whose lock is held is skipped and reported busy; the other ranges run', async () => {
    const h = await harness();
    const deletable = Array.from({ length: 24 }, () => newTxid());
    await scene(h, deletable, []);
    const held = rangeOf(deletable[0]);
    const inHeld = deletable.filter((t) => rangeOf(t) === held);
    // another pass holds that range
    await h.engine.create(rangeLockKey(RANGES[held]), { passOwner: 'another pass', startedAt: 0 }, { ttl: 60 });

    const report = await h.service.runPass({ tip: TIP });
    expect(report).toMatchObject({ busy: true, rangesBusy: 1, more: true, errors: 0 });
    expect(report.deleted).toBe(deletable.length - inHeld.length);
    expect(await existing(h, deletable)).toEqual(inHeld);
    expect(h.counts.CleanupBusy).toBe(1);
    // the other pass's lock is left alone
    expect((await h.engine.get(rangeLockKey(RANGES[held])))?.bins.passOwner).toBe('another pass');

    await h.engine.remove(rangeLockKey(RANGES[held]));
    const next = await h.service.runPass({ tip: TIP });
    expect(next).toMatchObject({ deleted: inHeld.length, errors: 0, more: false });
    expect(next.busy).toBeUndefined();
    expect(next.rangesBusy).toBeUndefined();
  });

  test("a whole pass while a shard runs skips the shard's ranges; the shard then finishes its own", async () => {
    const h = await harness();
    const deletable = Array.from({ length: 24 }, () => newTxid());
    await scene(h, deletable, []);
    const ofShard = deletable.filter((t) => rangeOf(t) % 4 === 1);
    expect(ofShard.length).toBeGreaterThan(0);

    const g = gate();
    let entered!: () => void;
    const started = new Promise<void>((r) => (entered = r));
    const slow = watched(h.engine, async () => {
      entered();
      await g.wait();
    });
    const shard = h.serviceOver(slow.engine).runPass({ tip: TIP, shard: { index: 1, count: 4 } });
    await started;

    const whole = await h.service.runPass({ tip: TIP });
    expect(whole).toMatchObject({ busy: true, rangesBusy: 2, more: true, errors: 0 });
    expect(whole.deleted).toBe(deletable.length - ofShard.length);
    expect(await existing(h, deletable)).toEqual(ofShard);

    g.open();
    expect(await shard).toMatchObject({ deleted: ofShard.length, errors: 0, more: false });
    expect([...slow.queried].sort()).toEqual([RANGES[1], RANGES[5]].map((r) => `${r.begin}+${r.count}`).sort());
    expect(await existing(h, deletable)).toEqual([]);
  });

  test('a shard count up to the number of ranges: shard i of 8 runs range i only', async () => {
    const h = await harness();
    const deletable = Array.from({ length: 16 }, () => newTxid());
    await scene(h, deletable, []);
    const w = watched(h.engine);
    const report = await h.serviceOver(w.engine).runPass({ tip: TIP, shard: { index: 7, count: 8 } });
    expect([...w.queried]).toEqual([`${RANGES[7].begin}+${RANGES[7].count}`]);
    expect(report.deleted).toBe(deletable.filter((t) => rangeOf(t) === 7).length);
  });

  test('an invalid shard is a RangeError before anything is read or written', async () => {
    const h = await harness();
    const parent = newTxid();
    await scene(h, [parent], []);
    const calls: string[] = [];
    const engine = new Proxy(h.engine, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        return (...args: unknown[]) => {
          calls.push(prop);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const service = h.serviceOver(engine);
    const bad: [number, number, RegExp][] = [
      [0, 0, /count must be an integer in \[1, 8\], got 0/],
      [0, 9, /count must be an integer in \[1, 8\], got 9/],
      [0, 1.5, /count must be an integer in \[1, 8\], got 1.5/],
      [0, Number.NaN, /count must be an integer in \[1, 8\], got NaN/],
      [-1, 2, /index must be an integer in \[0, 2\), got -1/],
      [2, 2, /index must be an integer in \[0, 2\), got 2/],
      [0.5, 2, /index must be an integer in \[0, 2\), got 0.5/],
    ];
    for (const [index, count, message] of bad) {
      const run = service.runPass({ tip: TIP, shard: { index, count } });
      await expect(run).rejects.toThrow(RangeError);
      await expect(run).rejects.toThrow(message);
    }
    expect(calls).toEqual([]);
    expect(await h.ledger.exists(parent)).toBe(true);
    // one shard of one is the whole pass
    expect(await service.runPass({ tip: TIP, shard: { index: 0, count: 1 } })).toMatchObject({ deleted: 1 });
  });
});
