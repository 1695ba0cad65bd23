/**
 * The spend acknowledgement guard (SPEND_ACK_GUARD, lib/store/spend-many.ts, lib/store/ack-guard.ts): on an engine
 * that reports its cluster, a spend applied in a dangerous cluster state (`refuse`) or while the cluster is not
 * settled (`settled`) is answered in doubt (STORAGE_ERROR) instead of OK; it stays applied, and the retry answers OK
 * (its spend stood) or SPENT (another's did).
 */
import { FileBlobStore } from '../../lib/blob';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import type { ClusterState, ClusterView, RecordEngine } from '../../lib/engine/port';
import { InlineQueue } from '../../lib/signals';
import { FENCE_MS } from '../../lib/store/ack-guard';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { SpendRefusal, StoreSettings } from '../../lib/store/types';
import { makeTx, rootTx } from '../fixtures/txs';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { BASE_SETTINGS } from './store-contract';

const dir = mkdtempSync(path.join(tmpdir(), 'ack-guard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function open(settings: Partial<StoreSettings>, hook?: (r: SpendRefusal) => void) {
  const inner = await openEmbeddedEngine({ path: ':memory:' });
  let state: ClusterState = { stable: true, detail: 'cluster-stable on 3 node(s): K, K, K' };
  let view: ClusterView | ((n: number) => ClusterView) = MAJORITY_OF_3;
  const sizes: (number | undefined)[] = [];
  const views: number[] = [];
  const refusals: SpendRefusal[] = [];
  /** what happened, in order: `<udf fns> answered` per UDF batch, `view` when a view is asked, `signals` when sent */
  const events: string[] = [];
  const udfFns = (calls: unknown): string =>
    [...new Set((calls as { fn?: string }[]).map((c) => c.fn))].join(',') || 'none';
  const engine: RecordEngine = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'clusterState')
        return async (size?: number) => {
          sizes.push(size);
          events.push('view');
          return state;
        };
      if (prop === 'clusterView')
        return async () => {
          views.push(1);
          events.push('view');
          return typeof view === 'function' ? view(views.length) : view;
        };
      if (prop === 'batchApply')
        return async (calls: unknown) => {
          const answers = await target.batchApply(calls as never);
          events.push(`${udfFns(calls)} answered`);
          return answers;
        };
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const queue = new InlineQueue({ handler: { handle: async () => undefined } }); // the reconciler's work is not this test's
  const send = queue.send.bind(queue);
  queue.send = async (batch) => {
    events.push('signals');
    return send(batch);
  };
  const store = await createUtxoStore({
    engine,
    blobs: new FileBlobStore({ dir }),
    signals: queue,
    settings: { ...BASE_SETTINGS, ...settings },
    onSpendRefused: hook ?? ((r) => refusals.push(r)),
  });
  await store.setChainTip(1000, { force: true });
  return {
    store,
    sizes,
    views,
    refusals,
    events,
    setState: (s: ClusterState) => (state = s),
    setView: (v: ClusterView | ((n: number) => ClusterView)) => (view = v),
    close: () => inner.close(),
  };
}

const member = (node: string, key: string) => ({ node, state: 'member' as const, key });
const MAJORITY_OF_3: ClusterView = { nodes: ['a', 'b', 'c'].map((n) => member(n, 'K1')) };
const UNSETTLED = { stable: false, detail: 'cluster-stable on 3 node(s): ERROR, K2, K2' };

test('settled: a spend applied while unsettled is in doubt; the retry after settling is OK, a rival SPENT', async () => {
  const h = await open({ spendAckGuard: 'settled', clusterSize: 3 });
  const p = rootTx(2);
  await h.store.create(p.hex);
  const a = makeTx({ inputs: [{ parent: p, vout: 0 }] });
  const b = makeTx({ inputs: [{ parent: p, vout: 0 }] });
  h.setState(UNSETTLED);
  await expect(h.store.spend({ tx: a.hex })).rejects.toMatchObject({
    code: 'STORAGE_ERROR',
    details: { txid: p.txid, vout: 0, inDoubt: true },
    message: expect.stringMatching(/cluster was changing.*ERROR, K2, K2/),
  });
  expect(h.sizes).toEqual([3]);
  // applied, not rolled back
  expect(await h.store.getSpend({ txid: p.txid, vout: 0 })).toMatchObject({ status: 'SPENT', spendingTxid: a.txid });
  h.setState({ stable: true, detail: 'ok' });
  await expect(h.store.spend({ tx: a.hex })).resolves.toMatchObject({ spends: [{ status: 'OK' }] });
  await expect(h.store.spend({ tx: b.hex })).rejects.toMatchObject({ code: 'SPENT' });
  await h.close();
});

test('settled: in a batch the txs that succeeded and the SPENT answers become in doubt; other failures keep theirs', async () => {
  const h = await open({ spendAckGuard: 'settled' });
  const p = rootTx(2);
  await h.store.create(p.hex);
  const a = makeTx({ inputs: [{ parent: p, vout: 0 }] });
  const b = makeTx({ inputs: [{ parent: p, vout: 0 }] });
  const c = makeTx({ inputs: [{ parent: rootTx(1), vout: 0 }] });
  h.setState(UNSETTLED);
  const [ra, rb, rc] = await h.store.spendMany([{ tx: a.hex }, { tx: b.hex }, { tx: c.hex }]);
  expect(ra).toMatchObject({ ok: false, error: { code: 'STORAGE_ERROR' } });
  // b lost to a, whose spend may itself be lost in the merge: SPENT is no answer to give now
  expect(rb).toMatchObject({
    ok: false,
    error: { code: 'STORAGE_ERROR', details: { txid: p.txid, vout: 0, inDoubt: true, ackRefusal: 'unsettled' } },
  });
  expect(rc).toMatchObject({ ok: false, error: { code: 'TX_NOT_FOUND' } });
  expect(h.sizes).toEqual([undefined]); // no size: any size, every node agreeing
  await h.close();
});

test('a spend that failed everywhere asks nothing; off acknowledges while unsettled', async () => {
  const h = await open({ spendAckGuard: 'off' });
  const p = rootTx(1);
  await h.store.create(p.hex);
  h.setState(UNSETTLED);
  const a = makeTx({ inputs: [{ parent: p, vout: 0 }] });
  await expect(h.store.spend({ tx: a.hex })).resolves.toMatchObject({ spends: [{ status: 'OK' }] });
  expect(h.sizes).toEqual([]);
  await h.close();

  const g = await open({ spendAckGuard: 'settled' });
  g.setState(UNSETTLED);
  await expect(g.store.spend({ tx: makeTx({ inputs: [{ parent: rootTx(1), vout: 0 }] }).hex })).rejects.toMatchObject({
    code: 'TX_NOT_FOUND',
  });
  expect(g.sizes).toEqual([]);
  await g.close();
});

test('bad settings name the variable', async () => {
  await expect(open({ spendAckGuard: 'maybe' as 'off' })).rejects.toMatchObject({
    code: 'INVALID_ARGUMENT',
    details: { field: 'SPEND_ACK_GUARD' },
  });
  await expect(open({ clusterSize: -1 })).rejects.toMatchObject({ details: { field: 'AEROSPIKE_CLUSTER_SIZE' } });
  await expect(open({ clusterSize: 9 })).rejects.toMatchObject({ details: { field: 'AEROSPIKE_CLUSTER_SIZE' } });
});

test('refuse (default): acknowledged in a majority cluster that every member answers, migrations or not', async () => {
  const h = await open({ clusterSize: 3 });
  const p = rootTx(3);
  await h.store.create(p.hex);
  // a node gone (killed, or stopped by its watchdog): the other two formed a cluster of 2, the majority of 3
  h.setView({
    nodes: [member('a', 'K2'), member('b', 'K2'), { node: 'c', state: 'unreachable', detail: 'timeout' }],
  });
  let clock = 1_000_000;
  const now = jest.spyOn(performance, 'now').mockImplementation(() => clock);
  const a = makeTx({ inputs: [{ parent: p, vout: 0 }] });
  // this process has just seen the cluster: the silent node may still be an orphan serving others (decision 0009)
  await expect(h.store.spend({ tx: a.hex })).rejects.toMatchObject({
    code: 'STORAGE_ERROR',
    details: { inDoubt: true, ackRefusal: 'unfenced' },
  });
  // its first spend asked a view before its writes (the key before), and one after
  expect(h.views).toHaveLength(2);
  // once the cluster has been seen for FENCE_MS, the silent node has been killed by its watchdog: the retry is OK
  clock += FENCE_MS;
  await expect(h.store.spend({ tx: a.hex })).resolves.toMatchObject({ spends: [{ status: 'OK' }] });
  now.mockRestore();
  expect(h.sizes).toEqual([]); // the settled check is not asked
  expect(h.views).toHaveLength(3);
  // an orphan the client still reaches (cut off from the others): refused, whatever the others say
  h.setView({
    nodes: [member('a', 'K2'), member('b', 'K2'), { node: 'c', state: 'unstable', detail: 'ERROR::unstable' }],
  });
  const b = makeTx({ inputs: [{ parent: p, vout: 1 }] });
  await expect(h.store.spend({ tx: b.hex })).rejects.toMatchObject({
    code: 'STORAGE_ERROR',
    details: { txid: p.txid, vout: 1, inDoubt: true },
    message: expect.stringMatching(/node c is not a settled member/),
  });
  expect(await h.store.getSpend({ txid: p.txid, vout: 1 })).toMatchObject({ status: 'SPENT', spendingTxid: b.txid });
  // healed: the node rejoined, a new cluster: the first retry was written in another cluster than the one this
  // process knew before it (changed); the next is judged against the healed cluster and is OK
  h.setView(MAJORITY_OF_3);
  await expect(h.store.spend({ tx: b.hex })).rejects.toMatchObject({ details: { ackRefusal: 'changed' } });
  await expect(h.store.spend({ tx: b.hex })).resolves.toMatchObject({ spends: [{ status: 'OK' }] });
  await h.close();
});

test('refuse: nodes disagreeing, fewer than the majority agreeing, or no size configured and a node silent', async () => {
  const h = await open({ clusterSize: 3 });
  const p = rootTx(3);
  await h.store.create(p.hex);
  // one node still names the old cluster (it has not noticed yet): refused
  h.setView({ nodes: [member('a', 'K1'), member('b', 'K2'), member('c', 'K2')] });
  await expect(h.store.spend({ tx: makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex })).rejects.toMatchObject({
    message: expect.stringMatching(/nodes disagree on the cluster/),
  });
  h.setView({ nodes: [member('a', 'K9'), { node: 'b', state: 'unreachable', detail: 't' }] });
  await expect(h.store.spend({ tx: makeTx({ inputs: [{ parent: p, vout: 1 }] }).hex })).rejects.toMatchObject({
    message: expect.stringMatching(/1 node\(s\) agree, fewer than the majority 2/),
  });
  await h.close();
  const g = await open({});
  const q = rootTx(1);
  await g.store.create(q.hex);
  g.setView({ nodes: [member('a', 'K2'), member('b', 'K2'), { node: 'c', state: 'unreachable', detail: 't' }] });
  await expect(g.store.spend({ tx: makeTx({ inputs: [{ parent: q, vout: 0 }] }).hex })).rejects.toMatchObject({
    message: expect.stringMatching(/no AEROSPIKE_CLUSTER_SIZE/),
  });
  await g.close();
});

test('every refusal is told with its reason class and the number of txs answered in doubt; acknowledgements are not', async () => {
  const h = await open({ clusterSize: 3 });
  const p = rootTx(10);
  await h.store.create(p.hex);
  const spendOf = (vout: number) => makeTx({ inputs: [{ parent: p, vout }] }).hex;
  const silent = { node: 'c', state: 'unreachable' as const, detail: 'timeout' };
  const cases: [ClusterView, string][] = [
    [{ nodes: [member('a', 'K2'), member('b', 'K2'), { node: 'c', state: 'unstable', detail: 'ERROR' }] }, 'unstable'],
    [{ nodes: [member('a', 'K1'), member('b', 'K2'), member('c', 'K2')] }, 'disagree'],
    [{ nodes: [member('a', 'K2'), { ...silent, node: 'b' }, silent] }, 'belowMajority'],
    [{ nodes: [{ ...silent, node: 'a' }, { ...silent, node: 'b' }, silent] }, 'noAnswer'],
  ];
  let vout = 0;
  for (const [view, reason] of cases) {
    h.setView(view);
    const [ok, failed] = await h.store.spendMany([{ tx: spendOf(vout++) }, { tx: spendOf(vout++) }]);
    expect([ok, failed]).toMatchObject([
      { ok: false, error: { code: 'STORAGE_ERROR', details: { inDoubt: true, ackRefusal: reason } } },
      { ok: false, error: { code: 'STORAGE_ERROR', details: { inDoubt: true, ackRefusal: reason } } },
    ]);
  }
  expect(h.refusals.map((r) => [r.reason, r.txs])).toEqual(cases.map(([, reason]) => [reason, 2]));
  expect(h.refusals[0].detail).toMatch(/node c is not a settled member \(a=K2, b=K2, c=unstable\)/);
  // a SPENT answer is judged too (the spend it found may be lost when the cluster heals): in doubt, told
  h.setView({ nodes: [member('a', 'K2'), member('b', 'K2'), member('c', 'K1')] });
  const rival = makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex;
  await expect(h.store.spend({ tx: rival })).rejects.toMatchObject({
    code: 'STORAGE_ERROR',
    message: expect.stringMatching(/^output found spent while the cluster was changing, not answered SPENT/),
    details: { txid: p.txid, vout: 0, inDoubt: true, ackRefusal: 'disagree' },
  });
  // settled again: SPENT, and an acknowledged one is not told
  h.setView({ nodes: ['a', 'b', 'c'].map((n) => member(n, 'K2')) });
  await expect(h.store.spend({ tx: rival })).rejects.toMatchObject({ code: 'SPENT' });
  // another cluster than the one this process knew before the writes: refused as changed, then acknowledged
  h.setView(MAJORITY_OF_3);
  const last = spendOf(vout);
  await expect(h.store.spend({ tx: last })).rejects.toMatchObject({ details: { ackRefusal: 'changed' } });
  await expect(h.store.spend({ tx: last })).resolves.toMatchObject({ spends: [{ status: 'OK' }] });
  expect(h.refusals.map((r) => r.reason)).toEqual([...cases.map(([, reason]) => reason), 'disagree', 'changed']);
  await h.close();

  const g = await open({ spendAckGuard: 'settled', clusterSize: 3 });
  const q = rootTx(1);
  await g.store.create(q.hex);
  g.setState(UNSETTLED);
  await expect(g.store.spend({ tx: makeTx({ inputs: [{ parent: q, vout: 0 }] }).hex })).rejects.toMatchObject({
    details: { ackRefusal: 'unsettled' },
  });
  expect(g.refusals).toEqual([{ reason: 'unsettled', txs: 1, detail: UNSETTLED.detail }]);
  await g.close();
});
test('refuse: the view is asked once the spend writes are answered, before the rollback and the signals', async () => {
  const h = await open({ clusterSize: 3, utxoBatchSize: 2 });
  const p = rootTx(2);
  const q = rootTx(3); // outputs 0-1 on its master, 2 on page 1
  await h.store.createMany([{ tx: p.hex }, { tx: q.hex }]);
  // mined: spending page 1's only output makes it fully spent (an ALLSPENT signal)
  await h.store.setMined({ txids: [q.txid], blockId: 1, blockHeight: 1000, subtreeIdx: 0 });
  const a = makeTx({ inputs: [{ parent: p, vout: 0 }] });
  // b loses p:0 to a: its p:1 is given back (a rollback write); c spends q:2 (a signal)
  const b = makeTx({
    inputs: [
      { parent: p, vout: 1 },
      { parent: p, vout: 0 },
    ],
  });
  const c = makeTx({ inputs: [{ parent: q, vout: 2 }] });
  h.events.length = 0;
  const [ra, rb, rc] = await h.store.spendMany([{ tx: a.hex }, { tx: b.hex }, { tx: c.hex }]);
  expect([ra.ok, rb.ok, rc.ok]).toEqual([true, false, true]);
  // the first spend of a process asks a view before its writes (the key they must be judged against)
  expect(h.events).toEqual(['view', 'spendMulti answered', 'view', 'unspend answered', 'signals']);
  // a verdict asked before the rollback still decides: an orphan in it puts d, and e's SPENT, in doubt
  h.setView({ nodes: [member('a', 'K2'), { node: 'b', state: 'unstable', detail: 'ERROR' }] });
  const p2 = rootTx(2);
  await h.store.create(p2.hex);
  const d = makeTx({ inputs: [{ parent: p2, vout: 0 }] });
  const e = makeTx({
    inputs: [
      { parent: p2, vout: 1 },
      { parent: p2, vout: 0 },
    ],
  });
  const [rd, re] = await h.store.spendMany([{ tx: d.hex }, { tx: e.hex }]);
  expect(rd).toMatchObject({ ok: false, error: { code: 'STORAGE_ERROR', details: { inDoubt: true } } });
  expect(re).toMatchObject({ ok: false, error: { code: 'STORAGE_ERROR', details: { inDoubt: true } } });
  await h.close();
});

test('refuse: a request where only a SPENT answer stands asks the view after it; settled asks its check at the same point', async () => {
  const h = await open({ clusterSize: 3 });
  const p = rootTx(1);
  await h.store.create(p.hex);
  await h.store.spend({ tx: makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex });
  h.events.length = 0;
  await expect(h.store.spend({ tx: makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex })).rejects.toMatchObject({
    code: 'SPENT',
  });
  expect(h.events).toEqual(['spendMulti answered', 'view']);
  await h.close();
  const g = await open({ spendAckGuard: 'settled', utxoBatchSize: 2 });
  const q = rootTx(3);
  await g.store.create(q.hex);
  await g.store.setMined({ txids: [q.txid], blockId: 1, blockHeight: 1000, subtreeIdx: 0 });
  g.events.length = 0;
  await g.store.spend({ tx: makeTx({ inputs: [{ parent: q, vout: 2 }] }).hex });
  expect(g.events).toEqual(['spendMulti answered', 'view', 'signals']);
  await g.close();
});

test('refuse: a retry round writes again and is judged by a view asked after its own writes', async () => {
  const h = await open({ clusterSize: 3 });
  const p = rootTx(1);
  const x = rootTx(1);
  const r = rootTx(2);
  await h.store.createMany([{ tx: p.hex }, { tx: x.hex }, { tx: r.hex }]);
  await h.store.spend({ tx: makeTx({ inputs: [{ parent: x, vout: 0 }] }).hex });
  // a takes p:0 but fails on x:0 (already spent) and gives p:0 back; b lost p:0 to a, so it is tried again
  const a = makeTx({
    inputs: [
      { parent: p, vout: 0 },
      { parent: x, vout: 0 },
    ],
  });
  const b = makeTx({ inputs: [{ parent: p, vout: 0 }] });
  const c = makeTx({ inputs: [{ parent: r, vout: 0 }] });
  // the view asked after the first round's writes is a majority's; the one after the retry's writes sees an orphan
  h.setView((n) =>
    n === 1 ? MAJORITY_OF_3 : { nodes: [member('a', 'K2'), { node: 'b', state: 'unstable', detail: 'E' }] },
  );
  h.views.length = 0;
  h.events.length = 0;
  const [ra, rb, rc] = await h.store.spendMany([{ tx: a.hex }, { tx: b.hex }, { tx: c.hex }]);
  expect(h.events).toEqual(['spendMulti answered', 'view', 'unspend answered', 'spendMulti answered', 'view']);
  expect(ra).toMatchObject({ ok: false, error: { code: 'STORAGE_ERROR', details: { inDoubt: true } } });
  // the last view, asked after every write, decides for both rounds
  expect(rb).toMatchObject({ ok: false, error: { code: 'STORAGE_ERROR', details: { inDoubt: true } } });
  expect(rc).toMatchObject({ ok: false, error: { code: 'STORAGE_ERROR', details: { inDoubt: true } } });
  expect(await h.store.getSpend({ txid: p.txid, vout: 0 })).toMatchObject({ status: 'SPENT', spendingTxid: b.txid });
  await h.close();
});

test("an observer that throws does not change the answer: still in doubt, the guard's own error", async () => {
  const h = await open({ clusterSize: 3 }, () => {
    throw new Error('metrics down');
  });
  const p = rootTx(1);
  await h.store.create(p.hex);
  h.setView({ nodes: [member('a', 'K1'), member('b', 'K2'), member('c', 'K2')] });
  await expect(h.store.spend({ tx: makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex })).rejects.toMatchObject({
    code: 'STORAGE_ERROR',
    details: { inDoubt: true, ackRefusal: 'disagree' },
  });
  await h.close();
});
