import { mkdtempSync, readdirSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { EngineRecorder } from '../../bench/engine-replay';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import { EngineError, type BatchUpdateItem, type BatchWriteResult, type RecordEngine } from '../../lib/engine/port';

const key = (n: number) => Buffer.from([n]);

/** An engine whose calls take `delayMs` each, counting how many run at once. */
function slow(inner: RecordEngine, delayMs: number): RecordEngine & { maxInFlight: number } {
  let inFlight = 0;
  const wrapped = { maxInFlight: 0 } as RecordEngine & { maxInFlight: number };
  for (const method of ['create', 'update', 'get', 'batchGet', 'batchCreate'] as const) {
    (wrapped as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      wrapped.maxInFlight = Math.max(wrapped.maxInFlight, ++inFlight);
      await new Promise((r) => setTimeout(r, delayMs));
      try {
        return await (inner[method] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
      } finally {
        inFlight--;
      }
    };
  }
  return wrapped;
}

test('a replay issues the recorded calls on another engine, phase by phase, and ends with the same records', async () => {
  const recorded = await openEmbeddedEngine({ path: ':memory:' });
  const fresh = await openEmbeddedEngine({ path: ':memory:' });
  const recorder = new EngineRecorder(recorded);
  recorder.phase('create');
  await recorded.batchCreate([1, 2, 3].map((n) => ({ key: key(n), bins: { v: n } })));
  recorder.phase('update');
  await recorded.update(key(2), { v: 20 });
  await recorded.get(key(3));
  await recorded.ping(); // not a record operation: not recorded
  recorder.stop();
  await recorded.update(key(1), { v: 10 }); // after stop: not recorded

  expect(recorder.methods('create')).toBe('batchCreate 1');
  expect(recorder.methods('update')).toBe('update 1, get 1');
  const phases: (string | undefined)[] = [];
  const results = await recorder.replay(fresh, async (next) => void phases.push(next));
  expect(phases).toEqual(['create', 'update', undefined]);
  expect([...results].map(([phase, r]) => [phase, r.calls, r.errors])).toEqual([
    ['create', 1, {}],
    ['update', 2, {}],
  ]);
  expect((await fresh.batchGet([1, 2, 3].map(key))).map((r) => r?.bins.v)).toEqual([1, 20, 3]);
  await Promise.all([recorded.close(), fresh.close()]);
});

test('a spilled recording holds no arguments in memory and replays the same, round after round', async () => {
  const recorded = await openEmbeddedEngine({ path: ':memory:' });
  const dir = mkdtempSync(path.join(tmpdir(), 'replay-spill-'));
  const recorder = new EngineRecorder(recorded);
  recorder.phase('create');
  // no nested map: under jest, v8.deserialize makes objects of the outer realm, which the embedded engine's codec
  // does not take for plain objects (the bench runs in one realm)
  const bins = { n: 1, big: 2n ** 60n, bytes: Buffer.from('ab01', 'hex'), list: [null, Buffer.from([7])] };
  expect(await recorded.batchCreate([{ key: key(1), bins }])).toEqual([{ ok: true }]);
  recorder.phase('update');
  await recorded.update(key(1), { n: 2 });
  recorder.stop();
  expect(recorder.held()).toBe(2);
  recorder.spill(dir);
  expect(recorder.held()).toBe(0);
  expect(readdirSync(dir)).toHaveLength(2);

  for (const round of [1, 2]) {
    const fresh = await openEmbeddedEngine({ path: ':memory:' });
    const results = await recorder.replay(fresh);
    expect([...results].map(([phase, r]) => [phase, r.calls, r.errors])).toEqual([
      ['create', 1, {}],
      ['update', 1, {}],
    ]);
    expect((await fresh.get(key(1)))?.bins).toEqual({ ...bins, n: 2 });
    expect(recorder.held()).toBe(0);
    await fresh.close();
    expect(round).toBeGreaterThan(0);
  }
  await recorded.close();
  rmSync(dir, { recursive: true, force: true });
});

test("`around` wraps each phase's timed part: the phase's calls run inside it, `between` outside", async () => {
  const recorded = await openEmbeddedEngine({ path: ':memory:' });
  const fresh = await openEmbeddedEngine({ path: ':memory:' });
  const recorder = new EngineRecorder(recorded);
  recorder.phase('create');
  await recorded.create(key(1), { v: 1 });
  recorder.phase('read');
  await recorded.get(key(1));
  recorder.stop();

  const events: string[] = [];
  const watched = Object.create(fresh) as RecordEngine;
  watched.create = (...args) => (events.push('create call'), fresh.create(...args));
  watched.get = (...args) => (events.push('get call'), fresh.get(...args));
  await recorder.replay(
    watched,
    async (next) => void events.push(`between ${next}`),
    async (phase, work) => {
      events.push(`enter ${phase}`);
      await work();
      events.push(`leave ${phase}`);
    },
  );
  expect(events).toEqual([
    'between create',
    'enter create',
    'create call',
    'leave create',
    'between read',
    'enter read',
    'get call',
    'leave read',
    'between undefined',
  ]);
  await Promise.all([recorded.close(), fresh.close()]);
});

test('a replayer replays each phase as soon as it is recorded, spilled or not, while later phases are recorded', async () => {
  const recorded = await openEmbeddedEngine({ path: ':memory:' });
  const fresh = await openEmbeddedEngine({ path: ':memory:' });
  const dir = mkdtempSync(path.join(tmpdir(), 'replay-phases-'));
  const recorder = new EngineRecorder(recorded);
  const replayer = recorder.replayer(fresh);
  expect(replayer.next()).toBeUndefined();

  recorder.phase('create');
  await recorded.batchCreate([1, 2].map((n) => ({ key: key(n), bins: { v: n } })));
  recorder.spill(dir);
  expect(replayer.next()).toBe('create');
  await expect(replayer.run('update')).rejects.toThrow('phase "update" asked, the recording has "create" next');
  expect((await replayer.run('create')).calls).toBe(1);
  expect(recorder.held()).toBe(0);
  expect(replayer.next()).toBeUndefined();

  // recorded after the first phase was replayed, replayed without a spill; the update needs the replayed create
  recorder.phase('update');
  await recorded.update(key(2), { v: 20 });
  recorder.stop();
  expect(replayer.next()).toBe('update');
  expect(await replayer.run('update')).toMatchObject({ calls: 1, errors: {} });
  await expect(replayer.run('update')).rejects.toThrow('the recording has no more next');
  expect((await fresh.batchGet([1, 2].map(key))).map((r) => r?.bins.v)).toEqual([1, 20]);
  await Promise.all([recorded.close(), fresh.close()]);
  rmSync(dir, { recursive: true, force: true });
});

test('a call that started after another finished waits for it in the replay; overlapping calls overlap', async () => {
  const recorded = await openEmbeddedEngine({ path: ':memory:' });
  const fresh = await openEmbeddedEngine({ path: ':memory:' });
  const recorder = new EngineRecorder(recorded);
  recorder.phase('work');
  await Promise.all([recorded.create(key(1), { v: 1 }), recorded.create(key(2), { v: 2 })]);
  await recorded.update(key(1), { v: 11 }); // needs the create before it
  recorder.stop();

  const target = slow(fresh, 20);
  const results = await recorder.replay(target);
  expect(results.get('work')?.errors).toEqual({});
  expect(target.maxInFlight).toBe(2);
  expect((await fresh.get(key(1)))?.bins.v).toBe(11);
  await Promise.all([recorded.close(), fresh.close()]);
});

test("errors the replayed calls answer are counted by code (a batch's items one by one)", async () => {
  const recorded = await openEmbeddedEngine({ path: ':memory:' });
  const fresh = await openEmbeddedEngine({ path: ':memory:' });
  await fresh.create(key(1), { v: 0 });
  const recorder = new EngineRecorder(recorded);
  recorder.phase('work');
  await recorded.batchCreate([1, 2].map((n) => ({ key: key(n), bins: { v: n } })));
  await recorded.create(key(3), { v: 3 });
  recorder.stop();
  await fresh.create(key(3), { v: 0 });

  const results = await recorder.replay(fresh);
  expect(results.get('work')?.errors).toEqual({ 'batchCreate RECORD_EXISTS': 1, 'create RECORD_EXISTS': 1 });
  await Promise.all([recorded.close(), fresh.close()]);
});

test('calls an engine makes to itself inside a recorded call are not recorded again', async () => {
  const inner = await openEmbeddedEngine({ path: ':memory:' });
  await inner.create(key(1), { v: 1 });
  // like the Aerospike engine, whose batchUpdate sends generation-checked items as update() calls
  const selfCalling = Object.assign(Object.create(null) as RecordEngine, {
    update: (k: Buffer, bins: Record<string, number>) => inner.update(k, bins),
    async batchUpdate(this: RecordEngine, items: BatchUpdateItem[]): Promise<BatchWriteResult[]> {
      for (const item of items) await this.update(item.key, item.bins);
      return items.map(() => ({ ok: true }));
    },
  });
  const recorder = new EngineRecorder(selfCalling);
  recorder.phase('work');
  await selfCalling.batchUpdate([{ key: key(1), bins: { v: 2 } }]);
  await selfCalling.update(key(1), { v: 3 });
  recorder.stop();
  expect(recorder.methods('work')).toBe('batchUpdate 1, update 1');
  await inner.close();
});

test("a paged range query goes on from the replay's own cursors, not the recorded set's", async () => {
  const recorded = await openEmbeddedEngine({ path: ':memory:' });
  const fresh = await openEmbeddedEngine({ path: ':memory:' });
  const records = [1, 2, 3, 4, 5].map((n) => ({ key: key(n), bins: { deleteAtHeight: n } }));
  await recorded.batchCreate(records);
  await fresh.batchCreate(records);
  const recorder = new EngineRecorder(recorded);
  recorder.phase('pages');
  let cursor: string | undefined;
  do {
    ({ cursor } = await recorded.queryRange({ bin: 'deleteAtHeight', min: 1, max: 5, limit: 2, cursor }));
  } while (cursor !== undefined);
  recorder.stop();

  // cursors of another set: the replay target knows only the cursors it answered itself
  const seen: number[] = [];
  const target = Object.assign(Object.create(null) as RecordEngine, {
    async queryRange(query: Parameters<RecordEngine['queryRange']>[0]) {
      if (query.cursor !== undefined && !query.cursor.startsWith('replay:')) throw new EngineError('INVALID', 'cursor');
      const page = await fresh.queryRange({ ...query, cursor: query.cursor?.slice('replay:'.length) });
      seen.push(...page.records.map((r) => r.bins.deleteAtHeight as number));
      return { ...page, cursor: page.cursor === undefined ? undefined : `replay:${page.cursor}` };
    },
  });
  const results = await recorder.replay(target);
  expect(results.get('pages')).toMatchObject({ calls: 3, errors: {} });
  expect(seen.sort()).toEqual([1, 2, 3, 4, 5]);
  await Promise.all([recorded.close(), fresh.close()]);
});

test("a phase's CPU is this process's CPU while its calls run, not the work between phases", async () => {
  const recorded = await openEmbeddedEngine({ path: ':memory:' });
  const fresh = await openEmbeddedEngine({ path: ':memory:' });
  const recorder = new EngineRecorder(recorded);
  recorder.phase('work');
  await recorded.get(key(1));
  recorder.stop();

  // burns `ms` of this process's CPU (not of wall time: on a loaded machine a busy loop is descheduled part of it)
  const burn = (ms: number) => {
    const start = process.cpuUsage();
    for (;;) {
      const used = process.cpuUsage(start);
      if (used.user + used.system >= ms * 1000) return;
    }
  };
  const busy = Object.create(fresh) as RecordEngine;
  busy.get = async (...args) => {
    burn(40);
    return fresh.get(...args);
  };
  const results = await recorder.replay(busy, async () => burn(150));
  const cpuUs = results.get('work')!.cpuUs;
  expect(cpuUs).toBeGreaterThanOrEqual(35_000);
  expect(cpuUs).toBeLessThan(140_000);
  await Promise.all([recorded.close(), fresh.close()]);
});
