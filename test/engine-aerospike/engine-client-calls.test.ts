/**
 * AerospikeEngine against a recording double of the client: what it sends (keys, policies, metadata, UDF calls,
 * UDF calls) and how it maps what comes back; range queries, health and the cluster check are in
 * engine-queries.test.ts. Behaviour against a real server is the engine contract
 * (engine-contract.test.ts, when AEROSPIKE_HOSTS is set).
 */
import { AerospikeEngine, BATCH_CHUNK, AS_STATUS, parseUdfList } from '../../lib/engine/aerospike';
import { DEFAULT_TOMBSTONE_TTL_SECONDS, EngineError, TOMBSTONE_BIN } from '../../lib/engine/port';

import { asError, engineWith } from './fake-client';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const Aerospike = require('aerospike');

const KEY = Buffer.from('aa'.repeat(32), 'hex');
const KEY2 = Buffer.concat([KEY, Buffer.from([1, 0, 0, 0])]);

describe('AerospikeEngine writes', () => {
  test('create: create-only, key sent, never expires unless a ttl is given; null bins are left out', async () => {
    const { engine, callsOf } = engineWith({ put: undefined });
    await engine.create(KEY, { fee: 5, locked: null, utxoSpendableIn: { '2': 100 } });
    const [key, bins, meta, policy] = callsOf('put')[0].args as [
      { ns: string; set: string; key: Buffer },
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect([key.ns, key.set, key.key]).toEqual(['utxo', 'txs', KEY]);
    expect(bins).toEqual({ fee: 5, utxoSpendableIn: new Map([[2, 100]]) });
    expect(meta).toEqual({ ttl: Aerospike.ttl.NEVER_EXPIRE });
    expect(policy).toMatchObject({
      exists: Aerospike.policy.exists.CREATE,
      key: Aerospike.policy.key.SEND,
      gen: Aerospike.policy.gen.IGNORE,
    });

    await engine.create(KEY2, { lock_type: 'tx_creation' }, { ttl: 34 });
    expect(callsOf('put')[1].args[2]).toEqual({ ttl: 34 });
  });

  test('update: update-only, keeps the ttl unless given, checks the generation when given, null removes a bin', async () => {
    const { engine, callsOf } = engineWith({ put: undefined });
    await engine.update(KEY, { deleting: true, creating: null }, { generation: 7 });
    const [, bins, meta, policy] = callsOf('put')[0].args as Record<string, unknown>[];
    expect(bins).toEqual({ deleting: true, creating: null });
    expect(meta).toEqual({ ttl: Aerospike.ttl.DONT_UPDATE, gen: 7 });
    expect(policy).toMatchObject({ exists: Aerospike.policy.exists.UPDATE, gen: Aerospike.policy.gen.EQ });
  });

  test('write errors are mapped', async () => {
    const exists = engineWith({ put: asError(AS_STATUS.ERR_RECORD_EXISTS, 'Record exists') });
    await expect(exists.engine.create(KEY, { a: 1 })).rejects.toMatchObject({
      code: 'RECORD_EXISTS',
      message: `aerospike create ${KEY.toString('hex')}: Record exists (status 5)`,
    });
    const gen = engineWith({ put: asError(AS_STATUS.ERR_RECORD_GENERATION) });
    await expect(gen.engine.update(KEY, { a: 1 }, { generation: 1 })).rejects.toMatchObject({
      code: 'GENERATION_MISMATCH',
    });
    const big = engineWith({ put: asError(AS_STATUS.ERR_RECORD_TOO_BIG) });
    await expect(big.engine.create(KEY, { a: 1 })).rejects.toMatchObject({ code: 'RECORD_TOO_BIG' });
  });

  test('remove writes a tombstone: replace-only put of the tombstone bin with its TTL, filtered to live records', async () => {
    const ok = engineWith({ put: undefined });
    const before = Math.floor(Date.now() / 1000);
    expect(await ok.engine.remove(KEY, { generation: 3 })).toBe(true);
    expect(ok.callsOf('remove')).toHaveLength(0);
    const [, bins, meta, policy] = ok.callsOf('put')[0].args as Record<string, unknown>[];
    expect(Object.keys(bins)).toEqual([TOMBSTONE_BIN]);
    expect(bins[TOMBSTONE_BIN]).toBeGreaterThanOrEqual(before);
    expect(meta).toEqual({ ttl: DEFAULT_TOMBSTONE_TTL_SECONDS, gen: 3 });
    expect(policy).toMatchObject({
      exists: Aerospike.policy.exists.REPLACE,
      gen: Aerospike.policy.gen.EQ,
      key: Aerospike.policy.key.SEND,
      filterExpression: Aerospike.exp.not(Aerospike.exp.binExists(TOMBSTONE_BIN)),
    });

    const ttl = new AerospikeEngine({ client: ok.client, namespace: 'utxo', set: 'txs', tombstoneTtlSeconds: 60 });
    await ttl.remove(KEY);
    expect(ok.callsOf('put')[1].args[2]).toEqual({ ttl: 60 });
    expect(() => new AerospikeEngine({ client: ok.client, namespace: 'u', set: 's', tombstoneTtlSeconds: 0 })).toThrow(
      /tombstoneTtlSeconds/,
    );
  });

  test('remove: false when missing or already a tombstone; a stale generation is false only against a tombstone', async () => {
    const missing = engineWith({ put: asError(AS_STATUS.ERR_RECORD_NOT_FOUND) });
    expect(await missing.engine.remove(KEY)).toBe(false);
    const tomb = engineWith({ put: asError(AS_STATUS.FILTERED_OUT) });
    expect(await tomb.engine.remove(KEY)).toBe(false);
    // the server checks the generation before the filter: the record is re-read to tell a tombstone from a change
    const staleTomb = engineWith({
      put: asError(AS_STATUS.ERR_RECORD_GENERATION),
      select: { key: { key: KEY }, bins: { [TOMBSTONE_BIN]: 1 }, gen: 5, ttl: 100 },
    });
    expect(await staleTomb.engine.remove(KEY, { generation: 1 })).toBe(false);
    const staleLive = engineWith({
      put: asError(AS_STATUS.ERR_RECORD_GENERATION),
      select: { key: { key: KEY }, bins: {}, gen: 5, ttl: -1 },
    });
    await expect(staleLive.engine.remove(KEY, { generation: 1 })).rejects.toMatchObject({
      code: 'GENERATION_MISMATCH',
    });
    const down = engineWith({ put: asError(AS_STATUS.ERR_TIMEOUT) });
    await expect(down.engine.remove(KEY)).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  test('create over a tombstone: the create-only put fails, a replace filtered to tombstones takes the key', async () => {
    let n = 0;
    const answers = [asError(AS_STATUS.ERR_RECORD_EXISTS), undefined];
    const { engine, callsOf } = engineWith({ put: () => answers[n++] });
    await engine.create(KEY, { a: 1 });
    const puts = callsOf('put');
    expect(puts).toHaveLength(2);
    expect(puts[1].args[1]).toEqual({ a: 1 });
    expect(puts[1].args[2]).toEqual({ ttl: Aerospike.ttl.NEVER_EXPIRE });
    expect(puts[1].args[3]).toMatchObject({
      exists: Aerospike.policy.exists.REPLACE,
      filterExpression: Aerospike.exp.binExists(TOMBSTONE_BIN),
    });
  });

  test('create over a live record is RECORD_EXISTS; over a tombstone that just expired it is created', async () => {
    let n = 0;
    const live = [asError(AS_STATUS.ERR_RECORD_EXISTS, 'Record exists'), asError(AS_STATUS.FILTERED_OUT)];
    const a = engineWith({ put: () => live[n++] });
    await expect(a.engine.create(KEY, { a: 1 })).rejects.toMatchObject({ code: 'RECORD_EXISTS' });
    let m = 0;
    const expired = [asError(AS_STATUS.ERR_RECORD_EXISTS), asError(AS_STATUS.ERR_RECORD_NOT_FOUND), undefined];
    const b = engineWith({ put: () => expired[m++] });
    await b.engine.create(KEY, { a: 1 });
    expect(b.callsOf('put').map((c) => (c.args[3] as { exists: number }).exists)).toEqual([
      Aerospike.policy.exists.CREATE,
      Aerospike.policy.exists.REPLACE,
      Aerospike.policy.exists.CREATE,
    ]);
  });

  test('update is filtered to live records: a tombstone is RECORD_NOT_FOUND', async () => {
    const { engine, callsOf } = engineWith({ put: asError(AS_STATUS.FILTERED_OUT) });
    await expect(engine.update(KEY, { a: 1 })).rejects.toMatchObject({ code: 'RECORD_NOT_FOUND' });
    expect(callsOf('put')[0].args[3]).toMatchObject({
      filterExpression: Aerospike.exp.not(Aerospike.exp.binExists(TOMBSTONE_BIN)),
    });
  });

  test("per-call policies keep the client's configured timeouts and retries (a passed policy replaces them)", async () => {
    const configured = (ms: number) => ({ totalTimeout: ms, socketTimeout: ms, maxRetries: 0 });
    const { engine, callsOf } = engineWith({
      put: undefined,
      apply: { status: 'OK' },
      config: { policies: { write: configured(250), apply: configured(270) } },
    });
    await engine.create(KEY, { a: 1 });
    await engine.update(KEY, { a: 2 }, { generation: 1 });
    await engine.remove(KEY, { generation: 2 });
    await engine.apply(KEY, { module: 'm', fn: 'f', args: [] });
    expect(callsOf('put')[0].args[3]).toMatchObject({ ...configured(250), exists: Aerospike.policy.exists.CREATE });
    expect(callsOf('put')[1].args[3]).toMatchObject({ ...configured(250), gen: Aerospike.policy.gen.EQ });
    expect(callsOf('put')[2].args[3]).toMatchObject({ ...configured(250), exists: Aerospike.policy.exists.REPLACE });
    expect(callsOf('apply')[0].args[2]).toMatchObject({ ...configured(270), key: Aerospike.policy.key.SEND });
  });

  test('keys must be non-empty Buffers', async () => {
    const { engine } = engineWith();
    await expect(engine.get(Buffer.alloc(0))).rejects.toThrow(/non-empty Buffer/);
  });
});

describe('AerospikeEngine reads', () => {
  const record = { key: { key: KEY }, bins: { fee: 10, big: 2n ** 60n, m: { '1': 2 } }, gen: 4, ttl: -1 };

  test('get / select, missing record -> null', async () => {
    const { engine, callsOf } = engineWith({ get: record, select: record });
    expect(await engine.get(KEY)).toEqual({
      key: KEY,
      bins: { fee: 10, big: 2n ** 60n, m: { '1': 2 } },
      generation: 4,
      ttl: -1,
    });
    await engine.get(KEY, ['fee']);
    expect(callsOf('select')[0].args[1]).toEqual(['fee', TOMBSTONE_BIN]);
    const missing = engineWith({ get: asError(AS_STATUS.ERR_RECORD_NOT_FOUND) });
    expect(await missing.engine.get(KEY)).toBeNull();
    const down = engineWith({ get: asError(AS_STATUS.ERR_TIMEOUT) });
    await expect(down.engine.get(KEY)).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  test('batchGet: one result per key in order, missing -> null, other statuses throw', async () => {
    const { engine, callsOf } = engineWith({
      batchRead: [
        { status: AS_STATUS.OK, record },
        { status: AS_STATUS.ERR_RECORD_NOT_FOUND, record: { key: {} } },
      ],
    });
    const got = await engine.batchGet([KEY, KEY2], ['fee']);
    expect(got[0]?.generation).toBe(4);
    expect(got[1]).toBeNull();
    const sent = callsOf('batchRead')[0].args[0] as { type: number; bins?: string[] }[];
    expect(sent.map((r) => [r.type, r.bins])).toEqual([
      [Aerospike.batchType.BATCH_READ, ['fee', TOMBSTONE_BIN]],
      [Aerospike.batchType.BATCH_READ, ['fee', TOMBSTONE_BIN]],
    ]);
    const bad = engineWith({ batchRead: [{ status: AS_STATUS.ERR_TIMEOUT, record: { key: {} } }] });
    await expect(bad.engine.batchGet([KEY])).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(await engine.batchGet([])).toEqual([]);
  });
});

describe('AerospikeEngine reads of tombstones', () => {
  const tombstone = { key: { key: KEY }, bins: { [TOMBSTONE_BIN]: 1700000000 }, gen: 3, ttl: 1000 };
  test('get, select and batchGet read a tombstone as a missing record', async () => {
    const { engine } = engineWith({
      get: tombstone,
      select: tombstone,
      batchRead: [
        { status: AS_STATUS.OK, record: tombstone },
        { status: AS_STATUS.OK, record: { key: { key: KEY2 }, bins: { fee: 1 }, gen: 1, ttl: -1 } },
      ],
    });
    expect(await engine.get(KEY)).toBeNull();
    expect(await engine.get(KEY, ['fee'])).toBeNull();
    const got = await engine.batchGet([KEY, KEY2], ['fee']);
    expect(got.map((r) => r?.bins ?? null)).toEqual([null, { fee: 1 }]);
  });
});

describe('AerospikeEngine UDFs', () => {
  test('apply sends module, function and converted args, with the key stored; returns the map', async () => {
    const { engine, callsOf } = engineWith({ apply: { status: 'OK', signal: 'DAHSET' } });
    const res = await engine.apply(KEY, { module: 'utxo_1', fn: 'setMined', args: [9, { '0': 1 }, null, 5n] });
    expect(res).toEqual({ status: 'OK', signal: 'DAHSET' });
    const [, udf, policy] = callsOf('apply')[0].args as Record<string, unknown>[];
    expect(udf).toEqual({ module: 'utxo_1', funcname: 'setMined', args: [9, new Map([[0, 1]]), null, 5] });
    expect(policy).toMatchObject({ key: Aerospike.policy.key.SEND, ttl: Aerospike.ttl.DONT_UPDATE });
  });

  test('apply: a UDF error is UDF_ERROR, a non-map result too', async () => {
    const failing = engineWith({ apply: asError(AS_STATUS.ERR_UDF, 'UDF: Execution Error') });
    await expect(failing.engine.apply(KEY, { module: 'm', fn: 'f', args: [] })).rejects.toMatchObject({
      code: 'UDF_ERROR',
    });
    const odd = engineWith({ apply: 'OK' });
    await expect(odd.engine.apply(KEY, { module: 'm', fn: 'f', args: [] })).rejects.toMatchObject({
      code: 'UDF_ERROR',
    });
  });

  test('batchApply: one batchWrite with a BATCH_APPLY record per item; per-record results in order', async () => {
    const { engine, callsOf } = engineWith({
      batchWrite: [
        { status: AS_STATUS.OK, record: { bins: { SUCCESS: { status: 'OK' } } } },
        { status: AS_STATUS.ERR_UDF, record: { bins: {} } },
        { status: AS_STATUS.ERR_RECORD_TOO_BIG, record: { bins: {} } },
      ],
    });
    const items = [
      { key: KEY, module: 'utxo_1', fn: 'spendMulti', args: [[Buffer.from([1])]] },
      { key: KEY2, module: 'utxo_1', fn: 'spendMulti', args: [[Buffer.from([2])]] },
      { key: KEY2, module: 'utxo_1', fn: 'setMined', args: [1] },
    ];
    const results = await engine.batchApply(items);
    expect(results[0]).toEqual({ ok: true, result: { status: 'OK' } });
    expect(results[1]).toMatchObject({ ok: false, error: { code: 'UDF_ERROR' } });
    expect(results[2]).toMatchObject({ ok: false, error: { code: 'RECORD_TOO_BIG' } });
    expect((results[1] as { error: EngineError }).error.message).toContain(
      `utxo_1.spendMulti on ${KEY2.toString('hex')}`,
    );
    expect(callsOf('batchWrite')).toHaveLength(1);
    const sent = callsOf('batchWrite')[0].args[0] as { type: number; udf: unknown; policy: unknown }[];
    expect(sent.map((r) => r.type)).toEqual([2, 2, 2].map(() => Aerospike.batchType.BATCH_APPLY));
    expect(sent[2].udf).toEqual({ module: 'utxo_1', funcname: 'setMined', args: [1] });
    expect(sent[0].policy).toMatchObject({ key: Aerospike.policy.key.SEND });
  });

  test('batchUpdate: one batchWrite of update-only BATCH_WRITE records; an item with a generation goes as update()', async () => {
    let n = 0;
    const { engine, callsOf } = engineWith({
      put: () => (n++ === 0 ? undefined : asError(AS_STATUS.ERR_RECORD_GENERATION)),
      batchWrite: [
        { status: AS_STATUS.OK, record: { bins: {} } },
        { status: AS_STATUS.FILTERED_OUT, record: { bins: {} } },
        { status: AS_STATUS.ERR_RECORD_NOT_FOUND, record: { bins: {} } },
        { status: AS_STATUS.ERR_RECORD_TOO_BIG, record: { bins: {} } },
      ],
    });
    const results = await engine.batchUpdate([
      { key: KEY, bins: { deleting: true, creating: null } },
      { key: KEY2, bins: { deleting: true }, policy: { generation: 4 } },
      { key: KEY, bins: { a: 1 }, policy: { ttl: 60 } },
      { key: KEY2, bins: { a: 1 } },
      { key: KEY2, bins: { a: 2 }, policy: { generation: 9 } },
      { key: KEY, bins: { a: 3 } },
    ]);
    expect(results).toEqual([
      { ok: true },
      { ok: true },
      expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'RECORD_NOT_FOUND' }) }),
      expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'RECORD_NOT_FOUND' }) }),
      expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'GENERATION_MISMATCH' }) }),
      expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'RECORD_TOO_BIG' }) }),
    ]);
    expect(callsOf('batchWrite')).toHaveLength(1);
    const sent = callsOf('batchWrite')[0].args[0] as {
      type: number;
      key: { key: Buffer };
      ops: unknown[];
      policy: unknown;
    }[];
    expect(sent.map((r) => r.type)).toEqual([0, 1, 2, 3].map(() => Aerospike.batchType.BATCH_WRITE));
    expect(sent.map((r) => r.key.key)).toEqual([KEY, KEY, KEY2, KEY]);
    expect(sent[0].ops).toEqual([
      Aerospike.operations.write('deleting', true),
      Aerospike.operations.write('creating', null),
    ]);
    expect(sent[0].policy).toEqual({
      exists: Aerospike.policy.exists.UPDATE,
      key: Aerospike.policy.key.SEND,
      ttl: Aerospike.ttl.DONT_UPDATE,
    });
    // a tombstone is not updated: the batch's policy filters every record to live ones (sent once, not per record)
    expect(callsOf('batchWrite')[0].args[1]).toEqual({
      filterExpression: Aerospike.exp.not(Aerospike.exp.binExists(TOMBSTONE_BIN)),
    });
    expect(sent[1].policy).toMatchObject({ ttl: 60 });
    // the node client cannot give a batch write record its generation: those items are single checked puts
    const puts = callsOf('put');
    expect(puts.map((c) => c.args[2])).toEqual([
      { ttl: Aerospike.ttl.DONT_UPDATE, gen: 4 },
      { ttl: Aerospike.ttl.DONT_UPDATE, gen: 9 },
    ]);
    expect(puts[0].args[3]).toMatchObject({ exists: Aerospike.policy.exists.UPDATE, gen: Aerospike.policy.gen.EQ });
  });

  test('batchRemove: one batchWrite of replace-only tombstone writes; missing or tombstone is not an error', async () => {
    const { engine, callsOf } = engineWith({
      put: undefined,
      batchWrite: [
        { status: AS_STATUS.OK, record: { bins: {} } },
        { status: AS_STATUS.ERR_RECORD_NOT_FOUND, record: { bins: {} } },
        { status: AS_STATUS.FILTERED_OUT, record: { bins: {} } },
        { status: AS_STATUS.ERR_TIMEOUT, record: { bins: {} } },
      ],
    });
    const before = Math.floor(Date.now() / 1000);
    const results = await engine.batchRemove([
      { key: KEY },
      { key: KEY2 },
      { key: KEY, policy: { generation: 3 } },
      { key: KEY2 },
      { key: KEY },
    ]);
    expect(results).toEqual([
      { ok: true, existed: true },
      { ok: true, existed: false },
      { ok: true, existed: true },
      { ok: true, existed: false },
      expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'TIMEOUT' }) }),
    ]);
    const sent = callsOf('batchWrite')[0].args[0] as {
      type: number;
      ops: { bin: string; value: number }[];
      policy: unknown;
    }[];
    expect(sent).toHaveLength(4);
    expect(sent[0].type).toBe(Aerospike.batchType.BATCH_WRITE);
    expect(sent[0].ops).toHaveLength(1);
    expect(sent[0].ops[0]).toMatchObject({ bin: TOMBSTONE_BIN });
    expect(sent[0].ops[0].value).toBeGreaterThanOrEqual(before);
    expect(sent[0].policy).toEqual({
      exists: Aerospike.policy.exists.REPLACE,
      key: Aerospike.policy.key.SEND,
      ttl: DEFAULT_TOMBSTONE_TTL_SECONDS,
    });
    // a tombstone is left alone: the batch's policy filters every record to live ones (sent once, not per record)
    expect(callsOf('batchWrite')[0].args[1]).toEqual({
      filterExpression: Aerospike.exp.not(Aerospike.exp.binExists(TOMBSTONE_BIN)),
    });
    expect(callsOf('put').map((c) => c.args[2])).toEqual([{ ttl: DEFAULT_TOMBSTONE_TTL_SECONDS, gen: 3 }]);
  });

  test('batchUpdate / batchRemove: KEY_BUSY records are sent again; a failure of the whole call throws', async () => {
    let round = 0;
    const busy = engineWith({
      batchWrite: (records: unknown[]) => {
        round++;
        return records.map((_, i) => ({
          status: round === 1 && i === 1 ? AS_STATUS.ERR_RECORD_BUSY : AS_STATUS.OK,
          record: { bins: {} },
        }));
      },
    });
    expect(await busy.engine.batchRemove([{ key: KEY }, { key: KEY2 }])).toEqual([
      { ok: true, existed: true },
      { ok: true, existed: true },
    ]);
    expect(busy.callsOf('batchWrite').map((c) => (c.args[0] as unknown[]).length)).toEqual([2, 1]);
    const down = engineWith({ batchWrite: asError(AS_STATUS.ERR_CONNECTION, 'no connection') });
    await expect(down.engine.batchUpdate([{ key: KEY, bins: { a: 1 } }])).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    await expect(down.engine.batchRemove([{ key: KEY }])).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await down.engine.batchUpdate([])).toEqual([]);
    expect(down.callsOf('batchWrite')).toHaveLength(2);
  });

  test('KEY_BUSY (status 14) was not written: apply and batch records are sent again until written', async () => {
    let applies = 0;
    const single = engineWith({
      apply: () => (++applies < 4 ? asError(AS_STATUS.ERR_RECORD_BUSY) : { status: 'OK' }),
    });
    await expect(single.engine.apply(KEY, { module: 'm', fn: 'f', args: [] })).resolves.toEqual({ status: 'OK' });
    expect(applies).toBe(4);

    // batch: only the busy records go again, as a smaller batch; the results land in their places
    let round = 0;
    const batch = engineWith({
      batchWrite: (records: unknown[]) => {
        round++;
        return records.map((_, i) => ({
          status: round === 1 && i > 0 ? AS_STATUS.ERR_RECORD_BUSY : AS_STATUS.OK,
          record: { bins: { SUCCESS: { status: 'OK', round } } },
        }));
      },
    });
    const items = [KEY, KEY2, KEY].map((key) => ({ key, module: 'm', fn: 'f', args: [] }));
    const results = await batch.engine.batchApply(items);
    expect(results).toEqual([
      { ok: true, result: { status: 'OK', round: 1 } },
      { ok: true, result: { status: 'OK', round: 2 } },
      { ok: true, result: { status: 'OK', round: 2 } },
    ]);
    expect(batch.callsOf('batchWrite').map((c) => (c.args[0] as unknown[]).length)).toEqual([3, 2]);
  });

  test('KEY_BUSY past the command budget stands: UNAVAILABLE; other statuses are never sent again', async () => {
    let applies = 0;
    const busy = engineWith({
      config: { policies: { apply: { totalTimeout: 30 } } },
      apply: () => (applies++, asError(AS_STATUS.ERR_RECORD_BUSY)),
    });
    const started = Date.now();
    await expect(busy.engine.apply(KEY, { module: 'm', fn: 'f', args: [] })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    expect(Date.now() - started).toBeLessThan(500);
    expect(applies).toBeGreaterThan(1);
    let udfErrors = 0;
    const udf = engineWith({ apply: () => (udfErrors++, asError(AS_STATUS.ERR_UDF)) });
    await expect(udf.engine.apply(KEY, { module: 'm', fn: 'f', args: [] })).rejects.toMatchObject({
      code: 'UDF_ERROR',
    });
    expect(udfErrors).toBe(1);
  });

  test('batchApply: a failure of the whole call throws the mapped error', async () => {
    const { engine } = engineWith({ batchWrite: asError(AS_STATUS.ERR_CONNECTION, 'no connection') });
    await expect(engine.batchApply([{ key: KEY, module: 'm', fn: 'f', args: [] }])).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
  });

  test('batchApply over several chunks: a failed chunk is reported only after every other chunk has settled', async () => {
    let slowDone = false;
    let call = 0;
    const { engine } = engineWith({
      batchWrite: async (records: unknown[]) => {
        call++;
        if (call === 1) throw asError(AS_STATUS.ERR_TIMEOUT, 'timeout');
        await new Promise((r) => setTimeout(r, 30));
        slowDone = true;
        return records.map(() => ({ status: AS_STATUS.OK, record: { bins: { SUCCESS: { status: 'OK' } } } }));
      },
    });
    const items = Array.from({ length: BATCH_CHUNK + 1 }, () => ({ key: KEY, module: 'm', fn: 'f', args: [] }));
    // a caller that rolls back on this error must not run while the other chunk is still writing
    await expect(engine.batchApply(items)).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(slowDone).toBe(true);
  });

  test('parseUdfList', () => {
    expect(parseUdfList('udf-list\tfilename=a.lua,hash=1,type=LUA;filename=b.lua,hash=2,type=LUA;\n')).toEqual([
      'a.lua',
      'b.lua',
    ]);
    expect(parseUdfList('udf-list\t')).toEqual([]);
  });
});

test('batchRemove / batchUpdate: the batch policy with the filter is the configured batchParentWrite one', async () => {
  const configured = { totalTimeout: 7000, socketTimeout: 7000, maxRetries: 0 };
  const { engine, callsOf } = engineWith({
    config: { policies: { batchParentWrite: configured } },
    batchWrite: [{ status: AS_STATUS.OK, record: { bins: {} } }],
  });
  await engine.batchRemove([{ key: KEY }]);
  await engine.batchUpdate([{ key: KEY, bins: { a: 1 } }]);
  for (const call of callsOf('batchWrite')) {
    expect(call.args[1]).toEqual({
      ...configured,
      filterExpression: Aerospike.exp.not(Aerospike.exp.binExists(TOMBSTONE_BIN)),
    });
  }
  expect(callsOf('batchWrite')).toHaveLength(2);
});
