/**
 * The watchdog's rules on the other nodes' answers (cdk/node-watchdog.ts): which key a majority serves without the
 * node (majorityKey, check-start), and when a kill may go ahead: an unstable node only while a majority may serve
 * without it (unstableKillAllowed; else its count starts again: restartSpell), a silent one only while a majority
 * could re-form without it (silentKillAllowed).
 */
import {
  majorityKey,
  PEER_DOWN,
  restartSpell,
  silentKillAllowed,
  unstableKillAllowed,
  WATCHDOG,
  watchdogStep,
} from '../../cdk/node-watchdog';
import { HarnessWatchdog } from '../../scripts/partition/watchdog';
import { fakeCluster } from './fake-cluster';

test('majorityKey: at least min-cluster-size of the other nodes answer the same cluster key', () => {
  expect(majorityKey(['K1', 'K1'], 2)).toBe('K1');
  expect(majorityKey(['K1', 'K2'], 2)).toBeUndefined();
  expect(majorityKey(['K1', undefined], 2)).toBeUndefined();
  expect(majorityKey(['ERROR::unstable', 'ERROR::unstable'], 2)).toBeUndefined();
  expect(majorityKey(['', ''], 2)).toBeUndefined();
  expect(majorityKey(['K1', 'K2', 'K2', undefined], 2)).toBe('K2');
  expect(majorityKey(['K1', 'K2', 'K2', undefined], 3)).toBeUndefined();
});

test('unstableKillAllowed: killed only while min-cluster-size of the others may serve (a key, or no answer)', () => {
  expect(unstableKillAllowed(['K2', 'K2'], 2)).toEqual({ kill: true, mayServe: 2 });
  // cut off: they may serve without it
  expect(unstableKillAllowed([undefined, undefined], 2)).toEqual({ kill: true, mayServe: 2 });
  expect(unstableKillAllowed([undefined, 'K2'], 2)).toEqual({ kill: true, mayServe: 2 });
  // refusing the connection (not running, loading) or in no cluster: they serve nobody
  expect(unstableKillAllowed([PEER_DOWN, PEER_DOWN], 2)).toEqual({ kill: false, mayServe: 0 });
  expect(unstableKillAllowed([PEER_DOWN, 'ERROR::unstable-cluster'], 2)).toEqual({ kill: false, mayServe: 0 });
  expect(unstableKillAllowed([PEER_DOWN, ''], 2)).toEqual({ kill: false, mayServe: 0 });
  expect(unstableKillAllowed([PEER_DOWN, undefined], 2)).toEqual({ kill: false, mayServe: 1 });
  // 5 nodes, min 3
  expect(unstableKillAllowed([PEER_DOWN, 'K', 'K', undefined], 3)).toEqual({ kill: true, mayServe: 3 });
  expect(unstableKillAllowed([PEER_DOWN, PEER_DOWN, 'K', undefined], 3)).toEqual({ kill: false, mayServe: 2 });
});

test('restartSpell: the count starts again from now, the mark stays', () => {
  const s = watchdogStep({ answered: true, lastAnswerAt: 0 }, 'unstable', 1000).state;
  expect(watchdogStep(s, 'unstable', 1000 + WATCHDOG.unstableMs).kill).toBeDefined();
  const held = restartSpell(s, 11_000);
  expect(held.wipeOnStart).toBe('unstable');
  expect(watchdogStep(held, 'unstable', 11_000 + WATCHDOG.unstableMs - 1).kill).toBeUndefined();
  expect(watchdogStep(held, 'unstable', 11_000 + WATCHDOG.unstableMs).kill).toBeDefined();
});

test('silentKillAllowed: killed only while at least min-cluster-size of the other nodes answer at all', () => {
  // any answer counts (a key, ERROR, ''): the node runs and could re-form a cluster without the silent one
  expect(silentKillAllowed(['K1', 'ERROR::unstable'], 2)).toEqual({
    kill: true,
    answering: 2,
    resumed: false,
    peersBack: false,
  });
  expect(silentKillAllowed(['', 'K2'], 2)).toEqual({ kill: true, answering: 2, resumed: false, peersBack: false });
  // a whole-cluster stall, or this node cut off from the others: not killed
  expect(silentKillAllowed([undefined, undefined], 2)).toEqual({
    kill: false,
    answering: 0,
    resumed: false,
    peersBack: false,
  });
  expect(silentKillAllowed(['K1', undefined], 2)).toEqual({
    kill: false,
    answering: 1,
    resumed: false,
    peersBack: false,
  });
  expect(silentKillAllowed(['K1', 'K1', undefined, undefined], 3)).toEqual({
    kill: false,
    answering: 2,
    resumed: false,
    peersBack: false,
  });
  expect(silentKillAllowed(['K1', 'K1', 'ERROR', undefined], 3)).toEqual({
    kill: true,
    answering: 3,
    resumed: false,
    peersBack: false,
  });
  // the node answered the question asked with the others' (it resumed with them): its silence is stale, not killed
  expect(silentKillAllowed(['K1', 'K1'], 2, 'K1')).toEqual({
    kill: false,
    answering: 2,
    resumed: true,
    peersBack: false,
  });
  expect(silentKillAllowed(['K1', 'K1'], 2, 'ERROR::unstable')).toMatchObject({
    kill: false,
    resumed: true,
    peersBack: false,
  });
  // the question before a kill (the other nodes asked at once) stays within about a poll; running nodes answer in
  // milliseconds, so the kill still comes before the heartbeat timeout (3 s) when a majority could re-form
  expect(WATCHDOG.peerAnswerTimeoutMs).toBeLessThanOrEqual(WATCHDOG.pollMs + 100);
  expect(WATCHDOG.silentMs + WATCHDOG.infoTimeoutMs + WATCHDOG.pollMs).toBeLessThan(150 * 20);
});

test('silentKillAllowed: the first round in which the others answer again after a held one kills nothing', () => {
  // the previous round was held (a whole-cluster stall): this one may have begun while every node was stopped
  expect(silentKillAllowed(['K1', 'K1'], 2, undefined, true)).toEqual({
    kill: false,
    answering: 2,
    resumed: false,
    peersBack: true,
  });
  // still too few answering, or the node answered: no "back" to speak of
  expect(silentKillAllowed(['K1', undefined], 2, undefined, true)).toMatchObject({ kill: false, peersBack: false });
  expect(silentKillAllowed(['K1', 'K1'], 2, 'K1', true)).toMatchObject({
    kill: false,
    resumed: true,
    peersBack: false,
  });
  // the round after it (not held): killed as before
  expect(silentKillAllowed(['K1', 'K1'], 2, undefined, false)).toMatchObject({ kill: true, peersBack: false });
});

describe('the harness holds the kill of an unstable node while no majority may serve without it (HarnessWatchdog, rule 6)', () => {
  const UNSTABLE_MS = 600;
  /**
   * Three nodes; node 1 answers ERROR (in no cluster: an orphan) from the start; `peers()` is what nodes 2 and 3 answer
   * now: a key, ERROR, PEER_DOWN (the connection refused) or undefined (no answer). Watched for `windowMs` or until
   * node 1 is killed.
   */
  async function watchOrphan(peers: () => (string | undefined)[], windowMs: number) {
    const lines: string[] = [];
    const { cluster, kills } = fakeCluster();
    const info = (host: string) => {
      const i = Number(host.split('.')[3]);
      const a = i === 1 ? 'ERROR::unstable-cluster' : peers()[i - 2];
      if (a === PEER_DOWN) return Promise.reject(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
      return a === undefined ? Promise.reject(new Error('timeout')) : Promise.resolve(a);
    };
    const wd = new HarnessWatchdog(cluster, (l) => lines.push(l), 2, undefined, info, {
      ...WATCHDOG,
      unstableMs: UNSTABLE_MS,
    });
    const started = Date.now();
    wd.start();
    while (kills.length === 0 && Date.now() - started < windowMs) await new Promise((r) => setTimeout(r, 25));
    await wd.stop();
    const held = lines.filter((l) => /not killed, counting again/.test(l));
    return {
      killedAfterMs: kills.length === 0 ? undefined : kills[0].at - started,
      held,
      lines,
      mark: wd.wipeOnStart(1),
    };
  }

  test('the others refuse the connection or are in no cluster (restarting, loading): held, counted again, never killed', async () => {
    const r = await watchOrphan(() => [PEER_DOWN, 'ERROR::unstable-cluster'], 2_500);
    expect(r.killedAfterMs).toBeUndefined();
    expect(r.held.length).toBeGreaterThanOrEqual(2);
    expect(r.held[0]).toMatch(/n1: asd unstable for \d+ ms but only 0 of the other nodes may serve/);
  }, 10_000);

  test('the others answer a key, or give no answer (cut off: they may serve): killed once the unstable limit is up', async () => {
    for (const peers of [['K2', 'K2'], [undefined, undefined], [PEER_DOWN, undefined, 'K2'].slice(1)]) {
      const r = await watchOrphan(() => peers, 2_500);
      expect(r.killedAfterMs).toBeGreaterThanOrEqual(UNSTABLE_MS);
      expect(r.held).toEqual([]);
      expect(r.lines.join('\n')).toMatch(/n1: unstable for \d+ ms: SIGKILL \(mark unstable/);
    }
  }, 15_000);

  test('held while the others load, killed a full limit after they serve again (its count started again)', async () => {
    const started = Date.now();
    const r = await watchOrphan(() => (Date.now() - started < 1_200 ? [PEER_DOWN, PEER_DOWN] : ['K2', 'K2']), 5_000);
    expect(r.held.length).toBeGreaterThanOrEqual(1);
    expect(r.killedAfterMs).toBeGreaterThanOrEqual(1_200);
    expect(r.lines.join('\n')).toMatch(/counting again[^]*n1: unstable for \d+ ms: SIGKILL/);
  }, 10_000);
});
