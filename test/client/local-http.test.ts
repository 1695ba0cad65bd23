/**
 * The typed client against the local server over real HTTP (the Lambda handlers behind node:http, embedded engine
 * in memory): every single-request operation, the typed error of each conflict the server can answer, no retry of
 * a 409, and the setMined block job split into requests with progress.
 */
import '../http/quiet-logs';
import {
  ApiError,
  ConflictError,
  HttpTransport,
  InvalidArgumentError,
  isApiError,
  NotFoundError,
  PayloadTooLargeError,
  TxExistsError,
  UtxoStoreClient,
  type Transport,
  type TransportRequest,
} from '@bsv-utxo-store/client';
import { coinbaseTx, makeTx, rootTx, spendItem, utxoHashOf } from '../fixtures/txs';
import { startApi, type Api } from '../http/harness';

/** A transport that counts what it sends. */
class Counting implements Transport {
  readonly sent: TransportRequest[] = [];
  constructor(private readonly inner: Transport) {}
  send(request: TransportRequest) {
    this.sent.push(request);
    return this.inner.send(request);
  }
}

let api: Api;
let transport: Counting;
let client: UtxoStoreClient;

beforeAll(async () => {
  api = await startApi();
  transport = new Counting(new HttpTransport({ baseUrl: api.url }));
  client = new UtxoStoreClient({ transport, retry: { baseMs: 1 } });
});

afterAll(async () => {
  await client.close();
  await api.close();
});

async function caught(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('client over the local server', () => {
  test('create, get, spend, getUtxo, unspend, delete', async () => {
    const parent = rootTx(2);
    const created = await client.createTx(parent.hex);
    expect(created).toMatchObject({ txid: parent.txid, records: 1, external: false });
    expect(await client.getTx(parent.txid, ['fee', 'tx'])).toEqual({ txid: parent.txid, fee: 0, tx: parent.hex });

    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    expect(await client.spend(child.hex)).toEqual({ spends: [{ txid: parent.txid, vout: 0, status: 'OK' }] });
    // idempotent for the same spender
    expect((await client.spend(child.hex)).spends[0].status).toBe('OK');
    expect(await client.getUtxo(parent.txid, 0)).toEqual({ status: 'SPENT', spendingTxid: child.txid, vin: 0 });
    expect(await client.getUtxo(parent.txid, 1, utxoHashOf(parent, 1))).toEqual({ status: 'OK' });

    await client.unspend([spendItem(parent, 0, child)]);
    expect(await client.getUtxo(parent.txid, 0)).toEqual({ status: 'OK' });

    const explicit = await client.spendOutputs([spendItem(parent, 1, child, 1)]);
    expect(explicit.spends).toEqual([{ txid: parent.txid, vout: 1, status: 'OK' }]);

    await client.deleteTx(parent.txid);
    expect(await caught(client.getTx(parent.txid))).toBeInstanceOf(NotFoundError);
  });

  test('createMany and spendMany, full and brief: a brief success has no value, a failure its typed error', async () => {
    const [a, b] = [rootTx(2), rootTx(1)];
    const full = await client.createMany([{ tx: a.hex }]);
    expect(full).toEqual([{ ok: true, value: expect.objectContaining({ txid: a.txid, records: 1 }) }]);
    const brief = await client.createMany([{ tx: b.hex }, { tx: a.hex }], { brief: true });
    expect(brief[0]).toEqual({ ok: true, value: undefined });
    expect(brief[1]).toMatchObject({ ok: false, error: expect.any(TxExistsError) });

    const spender = makeTx({ inputs: [{ parent: a, vout: 0 }] });
    const rival = makeTx({ inputs: [{ parent: a, vout: 0 }] });
    const spent = await client.spendMany([spender.hex, rival.hex], { brief: true });
    expect(spent[0]).toEqual({ ok: true, value: undefined });
    expect(spent[1]).toMatchObject({ ok: false, error: expect.any(ConflictError) });
    expect(await client.getUtxo(a.txid, 0)).toEqual({ status: 'SPENT', spendingTxid: spender.txid, vin: 0 });
    const other = makeTx({ inputs: [{ parent: a, vout: 1 }] });
    expect(await client.spendMany([other.hex])).toEqual([
      { ok: true, value: { spends: [{ txid: a.txid, vout: 1, status: 'OK' }] } },
    ]);
    // the brief option rides in the request's body, and only when asked
    const spends = transport.sent.filter((r) => r.path === '/v1/batch/spends').map((r) => r.body);
    expect(spends.slice(-2)).toEqual([{ txs: [spender.hex, rival.hex], brief: true }, { txs: [other.hex] }]);
  });

  test('chain tip, setMined, locked, conflicting, preserve, unmined, health, cleanup', async () => {
    const tx = rootTx(1);
    await client.createTx(tx.hex);
    const tip = await client.getChainTip();
    expect(await client.setChainTip(tip + 1)).toBe(tip + 1);
    expect(await client.setMined([tx.txid], { blockId: 7, blockHeight: tip + 1, subtreeIdx: 0 })).toEqual({
      blockIds: { [tx.txid]: [7] },
    });
    await client.setLocked([tx.txid], true);
    expect(await client.getTx(tx.txid, ['locked'])).toEqual({ txid: tx.txid, locked: true });
    await client.setLocked([tx.txid], false);
    await client.setConflicting([tx.txid], false);
    await client.preserve([tx.txid], tip + 100);
    const unmined = rootTx(1);
    await client.createTx(unmined.hex);
    const page = await client.queryUnmined({ cutoff: 0xffffffff, limit: 1000 });
    expect(page.txids).toContain(unmined.txid);
    expect(page.txids).not.toContain(tx.txid);
    expect(await client.health()).toMatchObject({ status: 'ok' });
    expect(await client.cleanup(1)).toMatchObject({ tip: tip + 1, more: expect.any(Boolean) });
  });

  test('typed errors of each conflict, with their details', async () => {
    const parent = rootTx(3);
    await client.createTx(parent.hex);

    const exists = await caught(client.createTx(parent.hex));
    expect(exists).toBeInstanceOf(TxExistsError);
    expect({ code: exists.code, status: exists.status, txid: exists.txid }).toEqual({
      code: 'TX_EXISTS',
      status: 409,
      txid: parent.txid,
    });

    const first = makeTx({ inputs: [{ parent, vout: 0 }] });
    await client.spend(first.hex);
    const second = makeTx({ inputs: [{ parent, vout: 0 }] });
    const spent = await caught(client.spend(second.hex));
    expect(spent).toBeInstanceOf(ConflictError);
    expect(isApiError(spent, 'SPENT')).toBe(true);
    expect({ status: spent.status, txid: spent.txid, vout: spent.vout, spender: spent.spendingTxid }).toEqual({
      status: 409,
      txid: parent.txid,
      vout: 0,
      spender: first.txid,
    });
    expect((spent as ConflictError).spends).toEqual([
      expect.objectContaining({ txid: parent.txid, vout: 0, status: 'ERROR', code: 'SPENT', spendingTxid: first.txid }),
    ]);

    const wrongHash = { ...spendItem(parent, 1, second, 0), utxoHash: 'ab'.repeat(32) };
    expect((await caught(client.spendOutputs([wrongHash]))).code).toBe('UTXO_HASH_MISMATCH');

    const u1 = { txid: parent.txid, vout: 1, utxoHash: utxoHashOf(parent, 1) };
    await client.freeze([u1]);
    const frozen = await caught(client.spend(makeTx({ inputs: [{ parent, vout: 1 }] }).hex));
    expect(frozen.code).toBe('FROZEN');
    expect((await caught(client.freeze([u1]))).code).toBe('ALREADY_FROZEN');
    await client.unfreeze([u1]);
    expect((await caught(client.unfreeze([u1]))).code).toBe('UTXO_NOT_FROZEN');

    await client.setLocked([parent.txid], true);
    expect((await caught(client.spend(makeTx({ inputs: [{ parent, vout: 2 }] }).hex))).code).toBe('LOCKED');
    await client.setLocked([parent.txid], false);
    await client.setConflicting([parent.txid], true);
    expect((await caught(client.spend(makeTx({ inputs: [{ parent, vout: 2 }] }).hex))).code).toBe('CONFLICTING');
    await client.setConflicting([parent.txid], false);

    const cb = coinbaseTx(1);
    await client.createTx(cb.hex, { isCoinbase: true, blockHeight: (await client.getChainTip()) + 10 });
    const immature = await caught(client.spend(makeTx({ inputs: [{ parent: cb, vout: 0 }] }).hex));
    expect(immature).toBeInstanceOf(ConflictError);
    expect(immature.code).toBe('COINBASE_IMMATURE');

    const missing = await caught(client.setLocked([rootTx(1).txid], true));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.code).toBe('TX_NOT_FOUND');

    const invalid = await caught(client.setChainTip(-1));
    expect(invalid).toBeInstanceOf(InvalidArgumentError);
    expect({ status: invalid.status, field: (invalid as InvalidArgumentError).field }).toEqual({
      status: 400,
      field: 'height',
    });

    // a tx over the binary body's limit (MAX_BINARY_BODY_BYTES): the batched create goes as a frame
    const tooLarge = await caught(client.createTx('00'.repeat(4_700_000)));
    expect(tooLarge).toBeInstanceOf(PayloadTooLargeError);
    expect({ code: tooLarge.code, status: tooLarge.status }).toEqual({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
  });

  test('double spends and reorgs: counter-conflicting, conflicting children, resolve, longest chain, unmined txs', async () => {
    const mined = { minedBlocks: [{ blockId: 7, blockHeight: 10, subtreeIdx: 0 }] };
    const parent = rootTx([100_000]);
    await client.createTx(parent.hex, mined);
    const first = makeTx({ inputs: [{ parent, vout: 0 }], outputs: [1000] });
    await client.createTx(first.hex);
    await client.spend(first.hex);
    const second = makeTx({ inputs: [{ parent, vout: 0 }], outputs: [900] });
    await client.createTx(second.hex, { conflicting: true });

    expect(await client.getCounterConflicting(second.txid)).toEqual([first.txid]);
    expect(await client.getConflictingChildren(parent.txid)).toEqual([second.txid]);
    expect((await client.processConflicting([second.txid])).losingTxids).toEqual([first.txid]);
    expect((await client.getUtxo(parent.txid, 0)).spendingTxid).toBe(second.txid);
    expect((await client.getTx(second.txid, ['conflicting'])).conflicting).toBe(false);

    await client.setLongestChain([parent.txid], false);
    expect((await client.getTx(parent.txid, ['unminedSince', 'blockIDs'])).blockIDs).toEqual([7]);
    const page = await client.iterateUnmined({ limit: 10_000 });
    expect(page.txs.map((t) => t.txid)).toContain(parent.txid);
    await expect(client.getCounterConflicting(rootTx().txid)).rejects.toBeInstanceOf(NotFoundError);
  });

  test('a 409 is not retried: one request', async () => {
    const parent = rootTx(1);
    await client.createTx(parent.hex);
    const before = transport.sent.length;
    await expect(client.createTx(parent.hex)).rejects.toBeInstanceOf(TxExistsError);
    expect(transport.sent.length - before).toBe(1);
  });

  test('setMinedMany: a block of txids in requests of at most N, with progress', async () => {
    const txs = Array.from({ length: 25 }, () => rootTx(1));
    for (const tx of txs) await client.createTx(tx.hex);
    const progress: number[] = [];
    const before = transport.sent.length;
    const result = await client.setMinedMany(
      txs.map((t) => t.txid),
      { blockId: 42, blockHeight: 5, subtreeIdx: 1 },
      { maxItemsPerRequest: 10, concurrency: 2, onProgress: (p) => progress.push(p.done) },
    );
    const requests = transport.sent.slice(before);
    expect(requests.map((r) => (r.body as { txids: string[] }).txids.length)).toEqual([10, 10, 5]);
    // one callback per request, the count of finished items rising to the total
    expect(progress).toHaveLength(3);
    expect(progress[0]).toBe(10);
    expect(progress[1]).toBeGreaterThan(progress[0]);
    expect(progress[2]).toBe(25);
    expect([...result.keys()].sort()).toEqual(txs.map((t) => t.txid).sort());
    expect(result.get(txs[0].txid)).toEqual([42]);
  });
});
