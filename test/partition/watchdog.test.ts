/**
 * The node watchdog's rule (cdk/node-watchdog.ts watchdogStep, run by the harness and rendered for the cluster
 * stack's nodes): kill a node silent for 2 s or unstable for 10 s; the mark records why (unstable wins within a
 * spell, a member clears it); a start wipes an unstable-marked node, and a silent-marked one only when a majority
 * serves without it (startDecision).
 */
import fc from 'fast-check';
import {
  INITIAL_WATCHDOG_STATE,
  renderWatchdogScript,
  PEER_DOWN,
  startDecision,
  renderWatchdogUnits,
  SILENT_KILL_WORST_MS,
  WATCHDOG,
  watchdogStep,
  type Observation,
  type WatchdogState,
} from '../../cdk/node-watchdog';
import { parameterNames, renderBootstrap } from '../../cdk/aerospike-scripts';
import type { Pins } from '../../cdk/node-pins';
import { NEMESES } from '../../scripts/partition/nemesis';
import { HarnessWatchdog } from '../../scripts/partition/watchdog';
import { fakeCluster } from './fake-cluster';

function run(observations: [Observation, number][]) {
  let state: WatchdogState = INITIAL_WATCHDOG_STATE;
  const kills: number[] = [];
  for (const [o, t] of observations) {
    const step = watchdogStep(state, o, t);
    state = step.state;
    if (step.kill) kills.push(t);
  }
  return { state, kills };
}

test('silence counts from the sending of the last answered request: a node paused right after it is killed 2 s later', () => {
  // member answered (sent at 1_000, back at 1_010); paused at 1_020; each request then times out after 500 ms
  let state: WatchdogState = INITIAL_WATCHDOG_STATE;
  state = watchdogStep(state, 'member', 1_010, WATCHDOG, 1_000).state;
  const kills: number[] = [];
  for (let sent = 1_260; sent < 5_000; sent += 750) {
    const step = watchdogStep(state, 'silent', sent + WATCHDOG.infoTimeoutMs, WATCHDOG, sent);
    state = step.state;
    if (step.kill) kills.push(sent + WATCHDOG.infoTimeoutMs);
  }
  // the step alone: silentMs + infoTimeoutMs + pollMs after the last answer = 2.75 s; the question to the others
  // (silentKillAllowed) adds up to peerAnswerTimeoutMs: SILENT_KILL_WORST_MS
  expect(kills[0]).toBe(3_260);
  expect(kills[0] - 1_020).toBeLessThan(150 * 20);
  expect(kills[0] - 1_000 + WATCHDOG.peerAnswerTimeoutMs).toBeLessThanOrEqual(SILENT_KILL_WORST_MS);
});

test('a paused node (silent) is killed after 2 s, before the heartbeat timeout (3 s); its mark says silent', () => {
  const r = run([
    ['member', 0],
    ['silent', 250],
    ['silent', 1250],
    ['silent', 2250],
  ]);
  expect(r.kills).toEqual([2250]);
  expect(r.state.wipeOnStart).toBe('silent');
  expect(WATCHDOG.silentMs).toBeLessThan(150 * 20);
});

test('an orphan is killed after 10 s; a survivor orphaned for a moment (principal lost) is not, and keeps its data', () => {
  expect(
    run([
      ['unstable', 0],
      ['unstable', 9_999],
    ]).kills,
  ).toEqual([]);
  expect(
    run([
      ['unstable', 0],
      ['unstable', 10_000],
    ]).kills,
  ).toEqual([10_000]);
  const survivor = run([
    ['member', 0],
    ['unstable', 3_000],
    ['unstable', 5_000],
    ['member', 5_250],
  ]);
  expect(survivor).toEqual({ state: { answered: true, lastAnswerAt: 5_250 }, kills: [] });
  expect(survivor.state.wipeOnStart).toBeUndefined();
});

test('a silent spell then an unstable one start their own clocks', () => {
  expect(
    run([
      ['silent', 0],
      ['unstable', 1_900],
      ['silent', 2_100],
      ['silent', 3_000],
    ]).kills,
  ).toEqual([]);
});

test('the mark records why: silent, or unstable once the node said it was outside the cluster; a member clears it', () => {
  expect(
    run([
      ['member', 0],
      ['silent', 500],
    ]).state.wipeOnStart,
  ).toBe('silent');
  expect(
    run([
      ['member', 0],
      ['unstable', 500],
    ]).state.wipeOnStart,
  ).toBe('unstable');
  // unstable wins within a non-member spell, whichever came first
  expect(
    run([
      ['member', 0],
      ['unstable', 500],
      ['silent', 1_000],
      ['silent', 2_000],
    ]).state.wipeOnStart,
  ).toBe('unstable');
  expect(
    run([
      ['member', 0],
      ['silent', 500],
      ['unstable', 1_000],
    ]).state.wipeOnStart,
  ).toBe('unstable');
  // a member observation ends the spell: a later silence is silent again
  expect(
    run([
      ['unstable', 0],
      ['member', 500],
      ['silent', 1_000],
    ]).state.wipeOnStart,
  ).toBe('silent');
  expect(
    run([
      ['unstable', 0],
      ['silent', 500],
      ['member', 1_000],
    ]).state.wipeOnStart,
  ).toBeUndefined();
});

test('invariant: the mark is set exactly when asd answered since its start and was last seen anything but a member; unstable iff seen in the last spell', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom<Observation>('member', 'unstable', 'silent'), fc.nat(500)), { minLength: 1 }),
      (steps) => {
        let t = 0;
        const r = run(steps.map(([o, dt]) => [o, (t += dt)]));
        const answers = steps.filter(([o]) => o !== 'silent');
        const last = steps[steps.length - 1][0];
        const lastMember = steps.map(([o]) => o).lastIndexOf('member');
        const spell = steps.slice(lastMember + 1).map(([o]) => o);
        const expected =
          answers.length === 0 || last === 'member' ? undefined : spell.includes('unstable') ? 'unstable' : 'silent';
        expect(r.state.wipeOnStart).toBe(expected);
      },
    ),
  );
});

describe('startDecision (the start rule, run by the harness; the script is tested in test/cdk/watchdog-check-start)', () => {
  const fast = { waitMs: 60, retryMs: 10 };
  test('no mark: the data is kept, nobody asked; unstable: wiped once a majority serves without the node', async () => {
    const ask = jest.fn(() => Promise.resolve(['K', 'K']));
    expect((await startDecision(undefined, ask, 2, fast)).wipe).toBe(false);
    expect(ask).not.toHaveBeenCalled();
    expect(await startDecision('unstable', ask, 2, fast)).toEqual({
      wipe: true,
      why: 'a majority of 2 serves without it (cluster key K)',
    });
    expect(ask).toHaveBeenCalledTimes(1);
  });

  test('unstable, no majority: waits while another node may serve (no answer, or a lone key), however long', async () => {
    for (const answers of [
      [undefined, undefined],
      [PEER_DOWN, undefined],
      ['K1', PEER_DOWN],
      ['K1', 'K2'],
    ]) {
      let asked = 0;
      let stop = false;
      const d = await startDecision('unstable', () => (++asked >= 30 && (stop = true), Promise.resolve(answers)), 2, {
        ...fast,
        aborted: () => stop,
      });
      expect(d).toEqual({ wipe: false, why: 'stopped while waiting' });
      expect(asked).toBe(30); // far past the wait: still waiting
    }
  });

  test('unstable: the data is kept once every other node is reachable and in no cluster for the wait (every node isolated)', async () => {
    for (const answers of [[PEER_DOWN, PEER_DOWN], [PEER_DOWN, 'ERROR::unstable-cluster'], []]) {
      const started = Date.now();
      const d = await startDecision('unstable', () => Promise.resolve(answers), 2, fast);
      expect(d.wipe).toBe(false);
      expect(d.why).toMatch(/every other node reachable and in no cluster .*starting with its data/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(fast.waitMs);
    }
    // the quiet spell starts again when a node answers nothing in between
    const answers: (string | undefined)[][] = [
      [PEER_DOWN, PEER_DOWN],
      [PEER_DOWN, undefined],
    ];
    let asked = 0;
    const started = Date.now();
    const slow = { waitMs: 60, retryMs: 30 };
    const d = await startDecision('unstable', () => Promise.resolve(answers[asked++ < 4 ? asked % 2 : 0]), 2, slow);
    expect(d.wipe).toBe(false);
    // quiet from the fourth question (90 ms) on, not from the second (30 ms)
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  test('silent: wiped once a majority serves without the node (asked again while the peers re-form)', async () => {
    const answers = [
      ['ERROR', 'ERROR'],
      [undefined, 'K'],
      ['K', 'K'],
    ];
    let asked = 0;
    const d = await startDecision('silent', () => Promise.resolve(answers[Math.min(asked++, 2)]), 2, fast);
    expect(d).toEqual({ wipe: true, why: 'a majority of 2 serves without it (cluster key K)' });
    expect(asked).toBe(3);
  });

  test('silent: the data is kept when no majority serves without the node within the wait (every node killed at once)', async () => {
    for (const answers of [[undefined, undefined], ['K1', 'K2'], ['ERROR', 'K1'], ['K1']]) {
      let asked = 0;
      const started = Date.now();
      const d = await startDecision('silent', () => (asked++, Promise.resolve(answers)), 2, fast);
      expect(d.wipe).toBe(false);
      expect(d.why).toMatch(/no majority serving without this node .*starting with its data/);
      expect(asked).toBeGreaterThan(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(fast.waitMs);
    }
  });
});

test('the node script carries the same limits; the unit restarts the watchdog and wipes on a marked start', () => {
  const script = renderWatchdogScript('/etc/aerospike/devices', {
    file: '/etc/aerospike/aerospike.conf',
    serviceBelowHeartbeat: 2,
  });
  expect(script).toContain(`limit=${WATCHDOG.silentMs}`);
  expect(script).toContain(`UNSTABLE_MS=\${UNSTABLE_MS:-${WATCHDOG.unstableMs}}`);
  expect(script).toContain(`"$ASINFO" -v 'cluster-stable:ignore-migrations=true'`);
  expect(script).toMatch(/wipe\(\) \{[\s\S]*blkdiscard[\s\S]*< \/etc\/aerospike\/devices[\s\S]*check-start\)/);
  const units = renderWatchdogUnits();
  // the bootstrap installs the script from its SSM parameter, the start hook and the service, and starts it
  const bootstrap = renderBootstrap({
    prefix: '/p',
    logGroupName: 'g',
    pins: { stackName: 'S', logicalIds: {} as Pins['logicalIds'] },
  });
  // as pinned in the stack, like the other node scripts (cdk/node-pins.ts)
  expect(bootstrap).toContain(
    "fetch_pinned '/p/aerospike-watchdog' aerospike-watchdog /usr/local/sbin/aerospike-watchdog\n",
  );
  expect(bootstrap).toContain(`${units.startHook}UNIT`);
  expect(bootstrap).toContain(`cat > /etc/systemd/system/aerospike-watchdog.service <<'UNIT'\n${units.service}UNIT`);
  expect(bootstrap).toMatch(/systemctl enable [^\n]*aerospike-watchdog[\s\S]*systemctl start aerospike-watchdog/);
  expect(parameterNames('/p').watchdogScript).toBe('/p/aerospike-watchdog');
  expect(units.service).toMatch(/Restart=always/);
  expect(units.startHook).toContain('ExecStartPre=/usr/local/sbin/aerospike-watchdog check-start');
  // the package's unit has no Restart=: the drop-in restarts asd after the watchdog's kill (it then starts empty)
  expect(units.startHook).toMatch(/^Restart=on-failure$/m);
  expect(units.startHook).toMatch(/^RestartSec=1$/m);
});

test('npm run partition runs every nemesis the issue names', () => {
  expect(NEMESES.join(' ')).toBe(
    'cut-off split pause kill kill-wipe kill-no-restart clean-restart rolling-restart isolate-all new-client ' +
      'flapping-cut instance-pause two-kill az-isolation fabric-cut clock-skew',
  );
});

describe('the harness runs the start rule (HarnessWatchdog: a node its watchdog killed is started again after 1 s)', () => {
  /** three nodes; node 1 answers once, then nothing (paused); `peers` is what nodes 2 and 3 answer */
  async function killAndRestart(
    peers: (string | undefined)[],
    windowMs = 8000,
    resumed: { now: boolean; slow?: boolean } = { now: false },
    /** node 1's namespace cut from the other two (the harness itself still reaches every node) */
    cutOff = false,
  ) {
    const lines: string[] = [];
    const { cluster, starts } = fakeCluster({ cutOff });
    let asked1 = 0;
    // once `resumed.now`, node 1 answers the question asked with the others' (the kill's round, 300 ms) only: its
    // regular observation stays silent, as one timed out just before it resumed; `resumed.slow`: the other way round,
    // it answers its regular question (500 ms) only, too slow for the kill's round, and not the first one after it
    // resumed (pending when it did, it timed out)
    let sinceResumed = 0;
    const info = (host: string, _port: number, _command: string, timeoutMs?: number) => {
      const i = Number(host.split('.')[3]);
      const answered = resumed.slow ? WATCHDOG.infoTimeoutMs : WATCHDOG.peerAnswerTimeoutMs;
      const own = () =>
        asked1++ === 0 || (resumed.now && timeoutMs === answered && (!resumed.slow || sinceResumed++ > 0));
      const a = i === 1 ? (own() ? 'K' : undefined) : peers[i - 2];
      return a === undefined ? Promise.reject(new Error('timeout')) : Promise.resolve(a);
    };
    const wd = new HarnessWatchdog(cluster, (l) => lines.push(l), 2, { waitMs: 300, retryMs: 50 }, info);
    // only node 1 is watched (nodes 2 and 3 have no process here)
    wd.start();
    const until = Date.now() + windowMs;
    while (starts.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    await wd.stop();
    return { starts, lines };
  }

  /** after `ms`, nodes 2 and 3 answer `key`; with `resumed`, node 1 resumes too (as `resumed` says it answers) */
  function resumeAfter(ms: number, peers: (string | undefined)[], key: string, resumed?: { now: boolean }): void {
    setTimeout(() => {
      if (resumed) resumed.now = true;
      peers.splice(0, 2, key, key);
    }, ms);
  }

  test('killed silent while the other two serve as a majority: started again empty', async () => {
    const r = await killAndRestart(['K2', 'K2']);
    expect(r.starts).toEqual([{ index: 1, wipe: true }]);
    expect(r.lines.join('\n')).toMatch(/n1: silent for \d+ ms: SIGKILL \(mark silent/);
    expect(r.lines.join('\n')).toMatch(/n1: started again, empty \(mark silent: a majority of 2 serves without it/);
  }, 15_000);

  test("check-start asks the others from the node's side of a cut: a majority the harness sees but the node cannot is none", async () => {
    const r = await killAndRestart(['K2', 'K2'], 8000, { now: false }, true);
    expect(r.starts).toEqual([{ index: 1, wipe: false }]);
    expect(r.lines.join('\n')).toMatch(/n1: started again, WITH ITS DATA \(mark silent: no majority serving without/);
  }, 15_000);

  test('killed silent while the others run but no majority serves without it (re-forming): started again with its data', async () => {
    const r = await killAndRestart(['ERROR', 'ERROR']);
    expect(r.starts).toEqual([{ index: 1, wipe: false }]);
    expect(r.lines.join('\n')).toMatch(/n1: started again, WITH ITS DATA \(mark silent: no majority serving without/);
  }, 15_000);

  test('silent while the other nodes are silent too (a whole-cluster stall): not killed, said once', async () => {
    const r = await killAndRestart([undefined, 'K2'], 4000);
    expect(r.starts).toEqual([]);
    expect(r.lines.join('\n')).not.toMatch(/SIGKILL/);
    expect(r.lines.filter((l) => /a whole-cluster stall, not killed/.test(l))).toEqual([
      expect.stringMatching(/n1: asd silent for \d+ ms but only 1 of the other nodes answer \(min-cluster-size 2\)/),
    ]);
  }, 15_000);

  test('a stall, then the other nodes run again while the node is still silent: killed then', async () => {
    const peers: (string | undefined)[] = [undefined, undefined];
    const started = Date.now();
    resumeAfter(3500, peers, 'K2');
    const r = await killAndRestart(peers);
    expect(r.starts).toEqual([{ index: 1, wipe: true }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3500);
    // not on the first round in which they answer again (it may have begun during the stall): one round later
    expect(r.lines.join('\n')).toMatch(
      /a whole-cluster stall, not killed[^]*answer again after a whole-cluster stall: asked once more[^]*n1: silent for \d+ ms: SIGKILL/,
    );
  }, 15_000);

  test('a stall, then the whole cluster resumes: the node answers with the others, not killed on its stale silence', async () => {
    const peers: (string | undefined)[] = [undefined, undefined];
    const resumed = { now: false };
    resumeAfter(3500, peers, 'K2', resumed);
    const r = await killAndRestart(peers, 6000, resumed);
    expect(r.starts).toEqual([]);
    expect(r.lines.join('\n')).toMatch(/a whole-cluster stall, not killed/);
    expect(r.lines.join('\n')).not.toMatch(/SIGKILL/);
  }, 15_000);

  test('a stall, then the whole cluster resumes, the node answering slower than the kill round: not killed', async () => {
    // the e2e's whole-cluster stall: every node resumes at once and answers its pending questions in turn; a round
    // begun during the stall saw the others answer and the node not yet
    const peers: (string | undefined)[] = [undefined, undefined];
    const resumed = { now: false, slow: true };
    resumeAfter(3500, peers, 'K', resumed);
    const r = await killAndRestart(peers, 6000, resumed);
    expect(r.starts).toEqual([]);
    expect(r.lines.join('\n')).toMatch(/a whole-cluster stall, not killed[^]*answer again after a whole-cluster stall/);
    expect(r.lines.join('\n')).not.toMatch(/SIGKILL/);
  }, 15_000);
});
