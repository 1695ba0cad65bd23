/**
 * AerospikeEngine against a recording double of the client (as engine-client-calls.test.ts): range queries and their
 * cursors, health, and the spend acknowledgement guard's cluster check.
 */
import type { Client } from 'aerospike';
import {
  AerospikeEngine,
  AS_STATUS,
  checkQueryState,
  decodeCursor,
  encodeCursor,
  indexName,
} from '../../lib/engine/aerospike';
import { EngineError } from '../../lib/engine/port';
import { INDEXED_BINS } from '../../lib/domain/bins';
import { asError, engineWith, fakeClient, sindexList } from './fake-client';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const Aerospike = require('aerospike');

const KEY = Buffer.from('aa'.repeat(32), 'hex');

/**
 * A saved query state as the bundled C client writes it (as_query_to_bytes). The head is the C client's own output
 * for namespace utxo, set txs, select [deleteAtHeight], where deleteAtHeight in [-5, 2^40] (before any page: no
 * partitions, not paginated); the tail (partition progress of a paginated query) is appended in the same layout.
 */
const C_QUERY_HEAD =
  'a47574786fa374787301ae64656c657465417448656967687401a0ae64656c6574654174486569676874c2c2010100fbcf0000010000000000';
function mpUint(n: number): Buffer {
  if (n < 128) return Buffer.from([n]);
  if (n < 256) return Buffer.from([0xcc, n]);
  const b = Buffer.alloc(3);
  b[0] = 0xcd;
  b.writeUInt16BE(n, 1);
  return b;
}
function savedState(options: { head?: string; partitions?: number; trailing?: number[] } = {}) {
  const bool = (x: boolean) => Buffer.from([x ? 0xc3 : 0xc2]);
  const n = options.partitions ?? 4096;
  const parts: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const digest = Buffer.alloc(20, i % 3 === 0 ? i & 0xff : 0);
    parts.push(mpUint(i), bool(false), bool(i % 3 === 0), Buffer.from([0xb4]), digest, mpUint(i % 3 === 0 ? 300 : 0));
  }
  const bytes = Buffer.concat([
    Buffer.from(options.head ?? C_QUERY_HEAD, 'hex'),
    bool(false), // no UDF
    bool(false), // no operations
    bool(true), // partition progress
    mpUint(n),
    mpUint(0),
    bool(false),
    ...parts,
    mpUint(0), // max records
    mpUint(0), // records per second
    mpUint(0), // ttl
    bool(true), // paginated
    bool(false), // bins
    Buffer.from(options.trailing ?? []),
  ]);
  return { bytes: Array.from(bytes), bytesSize: bytes.length };
}

describe('AerospikeEngine range queries', () => {
  const rec = (k: Buffer, dah: number) => ({ key: { key: k }, bins: { deleteAtHeight: dah }, gen: 1, ttl: -1 });
  const indexJob = { wait: async () => undefined };
  const STATE = savedState();

  test('indexes are created once; the query is a paginated range filter', async () => {
    const { engine, callsOf, query } = engineWith({
      createIntegerIndex: indexJob,
      queryResults: { records: [rec(KEY, 5)], state: STATE },
    });
    const page = await engine.queryRange({
      bin: 'deleteAtHeight',
      min: 0,
      max: 10,
      limit: 1,
      bins: ['deleteAtHeight'],
    });
    expect(page.records).toEqual([{ key: KEY, bins: { deleteAtHeight: 5 }, generation: 1, ttl: -1 }]);
    expect(page.cursor).toMatch(/^as1\./);
    expect(decodeCursor(page.cursor!)).toEqual(STATE);
    expect(callsOf('createIntegerIndex').map((c) => c.args[0])).toEqual(
      INDEXED_BINS.map((bin) => ({ ns: 'utxo', set: 'txs', bin, index: indexName('txs', bin) })),
    );
    expect(callsOf('query')[0].args).toEqual(['utxo', 'txs', { paginate: true, maxRecords: 1 }]);
    expect(query.where).toHaveBeenCalledWith(Aerospike.filter.range('deleteAtHeight', 0, 10));
    expect(query.select).toHaveBeenCalledWith(['deleteAtHeight']);

    // the next page resumes from the cursor; a complete query has no cursor; indexes are not created again
    query.queryState = undefined;
    const next = engineWithQueryState(engine, query);
    const last = await engine.queryRange({ bin: 'deleteAtHeight', min: 0, max: 10, cursor: page.cursor });
    expect(next()).toEqual(STATE);
    expect(last.cursor).toBeUndefined();
    expect(callsOf('createIntegerIndex')).toHaveLength(3);
  });

  /** Captures the queryState the engine set before calling results(). */
  function engineWithQueryState(_engine: AerospikeEngine, query: { results: jest.Mock; queryState: unknown }) {
    let seen: unknown;
    query.results.mockImplementationOnce(async () => {
      seen = query.queryState;
      query.queryState = undefined;
      return [];
    });
    return () => seen;
  }

  test('bad bins, limits and cursors are INVALID; query errors are mapped', async () => {
    const { engine } = engineWith({ createIntegerIndex: indexJob, queryResults: asError(AS_STATUS.ERR_QUERY_TIMEOUT) });
    await expect(engine.queryRange({ bin: 'fee' as never, min: 0, max: 1 })).rejects.toThrow(/not an indexed bin/);
    await expect(engine.queryRange({ bin: 'unminedSince', min: 0, max: 1, limit: 0 })).rejects.toThrow(/bad limit/);
    await expect(engine.queryRange({ bin: 'unminedSince', min: 0, max: 1, cursor: 'nope' })).rejects.toMatchObject({
      code: 'INVALID',
    });
    await expect(engine.queryRange({ bin: 'unminedSince', min: 0, max: 1 })).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  test('a page that never answers is abandoned with TIMEOUT at the deadline (the client did not time it out)', async () => {
    const fake = fakeClient({ createIntegerIndex: indexJob });
    fake.query.results.mockImplementation(() => new Promise<never>(() => undefined));
    const engine = new AerospikeEngine({ client: fake.client, namespace: 'utxo', set: 'txs', queryDeadlineMs: 50 });
    const started = Date.now();
    await expect(engine.queryRange({ bin: 'unminedSince', min: 0, max: 1 })).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: expect.stringMatching(/no answer within 50 ms/),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    // a late failure of the abandoned page is not an unhandled rejection; the next page is asked normally
    fake.query.results.mockImplementation(async () => []);
    await expect(engine.queryRange({ bin: 'unminedSince', min: 0, max: 1 })).resolves.toEqual({ records: [] });
  });

  test('a cursor is handed to the client only when it is a saved range query of this engine on that bin', async () => {
    const { engine, query } = engineWith({ createIntegerIndex: indexJob, queryResults: { records: [] } });
    const cursorOf = (state: { bytes: number[] }) => encodeCursor(state)!;
    // garbage that inflates fine: as_query_from_bytes would fail and the native layer would dereference NULL
    for (const bad of [
      cursorOf({ bytes: [1, 2, 3, 250] }),
      cursorOf({ bytes: STATE.bytes.slice(0, -1) }),
      cursorOf(savedState({ trailing: [0] })),
      cursorOf(savedState({ partitions: 10 })),
      cursorOf(savedState({ head: C_QUERY_HEAD.replace('a47574786f', 'a46f747875') })), // namespace "otxu"
    ]) {
      await expect(engine.queryRange({ bin: 'deleteAtHeight', min: 0, max: 1, cursor: bad })).rejects.toMatchObject({
        code: 'INVALID',
        message: expect.stringMatching(/^invalid range query cursor/),
      });
    }
    // a cursor of the deleteAtHeight query does not resume an unminedSince query
    await expect(
      engine.queryRange({ bin: 'unminedSince', min: 0, max: 1, cursor: cursorOf(STATE) }),
    ).rejects.toMatchObject({ code: 'INVALID', message: expect.stringMatching(/another bin/) });
    expect(query.results).not.toHaveBeenCalled();
    await engine.queryRange({ bin: 'deleteAtHeight', min: 0, max: 1, cursor: cursorOf(STATE) });
    expect(query.results).toHaveBeenCalledTimes(1);
  });

  test('checkQueryState reads the C client layout and nothing else', () => {
    const expected = { namespace: 'utxo', set: 'txs', bin: 'deleteAtHeight' };
    expect(() => checkQueryState(STATE, expected)).not.toThrow();
    expect(() => checkQueryState(STATE, { ...expected, set: 'other' })).toThrow(/another set/);
    expect(() => checkQueryState(STATE, { ...expected, namespace: 'test' })).toThrow(/another namespace/);
    expect(() => checkQueryState({ bytes: [], bytesSize: 0 }, expected)).toThrow(/truncated/);
    // the C client's state of a query with a UDF (apply flag set) is refused
    const withUdf = STATE.bytes.slice();
    withUdf[C_QUERY_HEAD.length / 2] = 0xc3;
    expect(() => checkQueryState({ bytes: withUdf, bytesSize: withUdf.length }, expected)).toThrow(/UDF/);
  });

  test('a client that is not connected (client.query throws) is an EngineError, not a raw AerospikeError', async () => {
    const client = {
      query: () => {
        throw Object.assign(new Error('Not connected.'), { code: AS_STATUS.ERR_CLIENT });
      },
      createIntegerIndex: async () => indexJob,
      infoAll: async () => [sindexList(INDEXED_BINS.map((bin) => indexName('txs', bin)))],
    } as unknown as Client;
    const engine = new AerospikeEngine({ client, namespace: 'utxo', set: 'txs' });
    const err = await engine.queryRange({ bin: 'deleteAtHeight', min: 0, max: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).message).toMatch(/^aerospike query deleteAtHeight in \[0, 1\]: Not connected/);
  });

  test('a record without a stored user key is reported, not silently skipped', async () => {
    const { engine } = engineWith({
      createIntegerIndex: indexJob,
      queryResults: { records: [{ key: { digest: Buffer.from([0xab]) }, bins: {}, gen: 1, ttl: -1 }] },
    });
    await expect(engine.queryRange({ bin: 'preserveUntil', min: 0, max: 1 })).rejects.toThrow(
      /digest ab .* has no stored Buffer user key/,
    );
  });

  test('cursor encoding round-trips and rejects corrupt input', () => {
    const state = { bytes: Array.from({ length: 5000 }, (_, i) => i % 7), bytesSize: 5000 };
    const cursor = encodeCursor(state)!;
    expect(cursor.length).toBeLessThan(200);
    expect(decodeCursor(cursor)).toEqual(state);
    expect(encodeCursor(undefined)).toBeUndefined();
    expect(() => encodeCursor({ bytes: 'x' })).toThrow(/unexpected shape/);
    expect(() => decodeCursor('as1.!!!')).toThrow(/invalid range query cursor/);
  });
});

describe('AerospikeEngine health', () => {
  test('ping: connected and answering; not connected or not answering -> UNAVAILABLE', async () => {
    const client = (connected: boolean, infoAny: () => Promise<string>) =>
      ({ isConnected: () => connected, infoAny }) as unknown as Client;
    const ok = new AerospikeEngine({ client: client(true, async () => 'ok'), namespace: 'n', set: 's' });
    await expect(ok.ping()).resolves.toBeUndefined();
    const down = new AerospikeEngine({ client: client(false, async () => 'ok'), namespace: 'n', set: 's' });
    await expect(down.ping()).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/not connected/),
    });
    const mute = new AerospikeEngine({
      client: client(true, async () => {
        throw asError(AS_STATUS.ERR_CONNECTION, 'connection refused');
      }),
      namespace: 'n',
      set: 's',
    });
    await expect(mute.ping()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  test('close leaves a shared client open unless the engine owns it', async () => {
    const close = jest.fn();
    const client = { close } as unknown as Client;
    await new AerospikeEngine({ client, namespace: 'n', set: 's' }).close();
    expect(close).not.toHaveBeenCalled();
    await new AerospikeEngine({ client, namespace: 'n', set: 's', ownsClient: true }).close();
    expect(close).toHaveBeenCalledTimes(1);
  });
});

describe('AerospikeEngine.clusterState (the spend acknowledgement guard)', () => {
  test('stable only when every node answers the same cluster key; the size is asked when given', async () => {
    const ok = engineWith({ infoAll: [{ info: 'cluster-stable\tK1\n' }, { info: 'cluster-stable\tK1\n' }] });
    await expect(ok.engine.clusterState(3)).resolves.toMatchObject({
      stable: true,
      detail: expect.stringMatching(/2 node/),
    });
    expect(ok.callsOf('infoAll')[0].args[0]).toBe('cluster-stable:size=3;ignore-migrations=false');
    await ok.engine.clusterState();
    expect(ok.callsOf('infoAll')[1].args[0]).toBe('cluster-stable:ignore-migrations=false');

    const split = engineWith({ infoAll: [{ info: 'cluster-stable\tK1' }, { info: 'cluster-stable\tK2' }] });
    await expect(split.engine.clusterState()).resolves.toMatchObject({
      stable: false,
      detail: expect.stringMatching(/K1, K2/),
    });
    const migrating = engineWith({
      infoAll: [{ info: 'cluster-stable\tERROR::unstable-cluster' }, { info: 'cluster-stable\tK1' }],
    });
    await expect(migrating.engine.clusterState()).resolves.toMatchObject({ stable: false });
    const failed = engineWith({ infoAll: [{ info: 'cluster-stable\tK1' }, { error: new Error('timeout') }] });
    await expect(failed.engine.clusterState()).resolves.toMatchObject({ stable: false });
    const none = engineWith({ infoAll: [] });
    await expect(none.engine.clusterState()).resolves.toMatchObject({ stable: false });
    const thrown = engineWith({ infoAll: Object.assign(new Error('Node not found'), { code: -8 }) });
    await expect(thrown.engine.clusterState()).resolves.toMatchObject({ stable: false, detail: /Node not found/ });
  });
});
