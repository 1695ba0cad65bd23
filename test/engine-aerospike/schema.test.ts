/**
 * The engine's set-up on the cluster (lib/engine/aerospike/schema.ts) against a double of the client: index names
 * that fit Aerospike's limits whatever the set, the rename of an index under the old name, and a deadline on every
 * wait (a wait that expires is a DeadlineError naming the operation, never a hang).
 */
import fc from 'fast-check';
import { INDEXED_BINS } from '../../lib/domain/bins';
import { MAX_INDEX_NAME_LENGTH, MAX_SET_NAME_LENGTH } from '../../lib/domain/engine-limits';
import { DeadlineError } from '../../lib/engine/deadline';
import { AS_STATUS, indexName, legacyIndexName, parseSindexList, parseUdfList } from '../../lib/engine/aerospike';
import { asError, engineWith, sindexList } from './fake-client';

const never = () => new Promise<never>(() => undefined);
const setName = fc.stringMatching(new RegExp(`^[A-Za-z0-9_-]{1,${MAX_SET_NAME_LENGTH}}$`));

describe('index names', () => {
  test('fit the server (63) and the sindex info requests for every set name Aerospike accepts, distinct per set', () => {
    fc.assert(
      fc.property(setName, setName, (a, b) => {
        for (const bin of INDEXED_BINS) {
          const name = indexName(a, bin);
          expect(name.length).toBeLessThanOrEqual(40);
          expect(name.length).toBeLessThanOrEqual(MAX_INDEX_NAME_LENGTH);
          expect(name.startsWith(a.slice(0, 16))).toBe(true);
          expect(name.endsWith(`_${bin}`)).toBe(true);
          if (a !== b) expect(indexName(b, bin)).not.toBe(name);
        }
      }),
    );
  });

  test('are stable (a deployment finds its indexes again after an upgrade of this code)', () => {
    expect(indexName('utxos', 'deleteAtHeight')).toBe('utxos_1568b63c_deleteAtHeight');
    expect(indexName('mainnet_validator_utxos1', 'unminedSince')).toMatch(
      /^mainnet_validato_[0-9a-f]{8}_unminedSince$/,
    );
    expect(legacyIndexName('utxos', 'deleteAtHeight')).toBe('utxos_deleteAtHeight');
  });

  test('parseSindexList reads the server answer (entries separated by ";", fields by ":")', () => {
    const info =
      'sindex-list:ns=utxo\tns=utxo:indexname=a_deleteAtHeight:set=a:bin=deleteAtHeight:type=numeric:indextype=default:context=null:exp=null:state=RW;ns=utxo:indexname=b:set=b:bin=x:type=numeric:indextype=default:context=null:exp=null:state=WO\n';
    expect(parseSindexList(info)).toEqual([
      { indexname: 'a_deleteAtHeight', set: 'a', bin: 'deleteAtHeight', state: 'RW' },
      { indexname: 'b', set: 'b', bin: 'x', state: 'WO' },
    ]);
    expect(parseSindexList('sindex-list:ns=utxo\t\n')).toEqual([]);
  });
});

describe('index creation', () => {
  const job = { wait: never };

  test('creates each index under its new name, never uses the client job.wait, and waits until every node lists it readable', async () => {
    let polls = 0;
    const created: string[] = [];
    const seenBuilding = new Set<string>();
    const { engine, callsOf } = engineWith({
      createIntegerIndex: (o: { index: string }) => {
        created.push(o.index);
        return job;
      },
      // node 2 reports each new index building (WO) on the first listing after its creation, then readable
      infoAll: () => {
        polls++;
        const building = created.length > 0 && !seenBuilding.has(created[created.length - 1]);
        if (building) seenBuilding.add(created[created.length - 1]);
        const node2 = building
          ? {
              host: {},
              info: `${sindexList(created.slice(0, -1)).info};${sindexList(created.slice(-1), 'WO').info.split('\t')[1]}`,
            }
          : sindexList(created);
        return [sindexList(created), node2];
      },
    });
    await engine.ensureIndexes();
    expect(created).toEqual(INDEXED_BINS.map((bin) => indexName('txs', bin)));
    expect(callsOf('infoAll').every((c) => c.args[0] === 'sindex-list:ns=utxo')).toBe(true);
    expect(polls).toBeGreaterThan(INDEXED_BINS.length);
    // a second call does nothing: the indexes are known
    await engine.ensureIndexes();
    expect(created).toHaveLength(INDEXED_BINS.length);
  });

  test('an index already listed under its name is not created again', async () => {
    const names = INDEXED_BINS.map((bin) => indexName('txs', bin));
    const { engine, callsOf } = engineWith({ infoAll: [sindexList(names), sindexList(names)] });
    await engine.ensureIndexes();
    expect(callsOf('createIntegerIndex')).toHaveLength(0);
  });

  test('an index under the old name is renamed by the create (the server keeps one index per definition)', async () => {
    // the server: a create of the same definition under another name renames the index (sindex_manager.c)
    const listed = INDEXED_BINS.map((bin) => legacyIndexName('txs', bin));
    const { engine, callsOf } = engineWith({
      infoAll: () => [sindexList(listed)],
      createIntegerIndex: (o: { bin: string; index: string }) => {
        listed[listed.indexOf(legacyIndexName('txs', o.bin as never))] = o.index;
        return job;
      },
    });
    await engine.ensureIndexes();
    expect(callsOf('createIntegerIndex').map((c) => (c.args[0] as { index: string }).index)).toEqual(
      INDEXED_BINS.map((bin) => indexName('txs', bin)),
    );
    expect(listed).toEqual(INDEXED_BINS.map((bin) => indexName('txs', bin)));
  });

  test('ERR_INDEX_FOUND is fine; a node reporting the index in ERROR fails the set-up', async () => {
    const name = indexName('txs', INDEXED_BINS[0]);
    let answered = false;
    const found = engineWith({
      createIntegerIndex: () => {
        answered = true;
        return asError(AS_STATUS.ERR_INDEX_FOUND);
      },
      infoAll: () => [sindexList(answered ? INDEXED_BINS.map((bin) => indexName('txs', bin)) : [])],
    });
    await found.engine.ensureIndexes();
    const broken = engineWith({ createIntegerIndex: job, infoAll: [sindexList([name], 'ERROR')] });
    await expect(broken.engine.ensureIndexes()).rejects.toThrow(
      `aerospike create index ${name}: a node reports the index in ERROR`,
    );
  });

  test('an index that never becomes readable is a DeadlineError naming the index, and the next call tries again', async () => {
    const { engine, callsOf } = engineWith(
      { createIntegerIndex: job, infoAll: [sindexList([indexName('txs', INDEXED_BINS[0])], 'WO')] },
      { schemaDeadlineMs: 60 },
    );
    const started = Date.now();
    const err = await engine.ensureIndexes().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(err).toMatchObject({
      code: 'TIMEOUT',
      operation: `aerospike create index ${indexName('txs', INDEXED_BINS[0])}`,
      message: expect.stringMatching(/no answer within 60 ms/),
    });
    expect(Date.now() - started).toBeLessThan(2000);
    await expect(engine.ensureIndexes()).rejects.toBeInstanceOf(DeadlineError);
    expect(callsOf('createIntegerIndex').length).toBeGreaterThanOrEqual(1);
  });

  test('a create or a listing that never answers is a DeadlineError, not a hang', async () => {
    const silentCreate = engineWith({ createIntegerIndex: never }, { schemaDeadlineMs: 40 });
    await expect(silentCreate.engine.ensureIndexes()).rejects.toMatchObject({
      name: 'DeadlineError',
      operation: `aerospike create index ${indexName('txs', INDEXED_BINS[0])}`,
    });
    const silentList = engineWith({ infoAll: never }, { schemaDeadlineMs: 40 });
    await expect(silentList.engine.ensureIndexes()).rejects.toMatchObject({
      name: 'DeadlineError',
      operation: 'aerospike list indexes of utxo',
    });
  });

  test('a query waits for the indexes with the same deadline', async () => {
    const { engine } = engineWith({ infoAll: never }, { schemaDeadlineMs: 40 });
    await expect(engine.queryRange({ bin: 'deleteAtHeight', min: 0, max: 1 })).rejects.toBeInstanceOf(DeadlineError);
  });
});

describe('UDF module registration', () => {
  const listed = (...files: string[]) => ({
    host: {},
    info: `udf-list\t${files.map((f) => `filename=${f},hash=abc,type=LUA`).join(';')};`,
  });

  test('registers <name>.lua only when a node lacks it, and waits until every node lists it', async () => {
    const present = engineWith({ infoAll: [listed('utxo_1.lua', 'other.lua')] });
    await present.engine.ensureModule('utxo_1', '-- lua');
    expect(present.callsOf('udfRegister')).toHaveLength(0);

    let registered = '';
    let lists = 0;
    const absent = engineWith({
      // node 2 lists the module only from the third listing after the registration on
      infoAll: () => [listed('utxo_1.lua'), registered && ++lists >= 3 ? listed('utxo_1.lua') : listed()],
      udfRegister: async (p: string) => {
        registered = (await import('fs')).readFileSync(p, 'utf8');
        return { wait: never };
      },
    });
    await absent.engine.ensureModule('utxo_1', '-- the module');
    expect(absent.callsOf('udfRegister')[0].args[0]).toMatch(/[/\\]utxo_1\.lua$/);
    expect(registered).toBe('-- the module');
    expect(lists).toBe(3);
    await expect(absent.engine.ensureModule('../x', '')).rejects.toThrow(/bad UDF module name/);
  });

  test('a module that never shows on every node, or a registration that never answers, is a DeadlineError', async () => {
    const unlisted = engineWith({ infoAll: [listed()], udfRegister: { wait: never } }, { schemaDeadlineMs: 40 });
    await expect(unlisted.engine.ensureModule('utxo_1', '--')).rejects.toMatchObject({
      name: 'DeadlineError',
      operation: 'aerospike register UDF module utxo_1.lua',
    });
    const silent = engineWith({ infoAll: [listed()], udfRegister: never }, { schemaDeadlineMs: 40 });
    await expect(silent.engine.ensureModule('utxo_1', '--')).rejects.toMatchObject({
      name: 'DeadlineError',
      operation: 'aerospike register UDF module utxo_1.lua',
    });
    const noList = engineWith({ infoAll: never }, { schemaDeadlineMs: 40 });
    await expect(noList.engine.ensureModule('utxo_1', '--')).rejects.toMatchObject({
      name: 'DeadlineError',
      operation: 'aerospike register UDF module utxo_1.lua (udf-list)',
    });
  });

  test('parseUdfList', () => {
    expect(parseUdfList('udf-list\tfilename=a.lua,hash=1,type=LUA;filename=b.lua,hash=2,type=LUA;\n')).toEqual([
      'a.lua',
      'b.lua',
    ]);
  });
});

describe('health and cluster checks', () => {
  test('a ping that never answers is a DeadlineError naming the ping', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const { engine } = engineWith({ infoAny: never, isConnected: undefined });
      // isConnected is synchronous on the client: the double answers a promise, which is truthy
      const pinged = engine.ping().catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(5000);
      expect(await pinged).toMatchObject({ name: 'DeadlineError', operation: 'aerospike ping' });
    } finally {
      jest.useRealTimers();
    }
  });

  test('a cluster check that never answers is unstable, with the reason, at its deadline', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const { engine } = engineWith({ infoAll: never });
      const state = engine.clusterState!(2);
      await jest.advanceTimersByTimeAsync(3000);
      expect(await state).toEqual({ stable: false, detail: 'cluster-stable: no answer within 3000 ms' });
    } finally {
      jest.useRealTimers();
    }
  });
});
