/**
 * The node watchdog script's `check-start` (cdk/node-watchdog.ts, decisions 0007 and 0009) run with bash against
 * stubs (test/cdk/watchdog-script-fixture.ts): a stub asinfo answering for the other nodes and a stub blkdiscard
 * recording the wipe. Any mark wipes only when a majority serves without the node; its `run` is in watchdog-run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { AEROSPIKE_SERVICE_PORT } from '../../cdk/aerospike-scripts';
import { WATCHDOG } from '../../cdk/node-watchdog';
import {
  answer,
  calls,
  dir,
  env,
  mark,
  probe,
  script,
  setMark,
  setUp,
  stub,
  tearDown,
  writeConf,
} from './watchdog-script-fixture';

/** check-start with `extra` env; `timeoutMs`: killed if still waiting then (status null: it did not start) */
function checkStart(extra: Record<string, string> = {}, timeoutMs?: number) {
  const file = path.join(dir, 'aerospike-watchdog');
  writeFileSync(file, script());
  const started = Date.now();
  const r = spawnSync('bash', [file, 'check-start'], {
    encoding: 'utf8',
    env: env(extra),
    ...(timeoutMs ? { timeout: timeoutMs, killSignal: 'SIGKILL' as const } : {}),
  });
  const log = existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : [];
  return {
    status: r.status,
    stderr: r.stderr,
    ms: Date.now() - started,
    wiped: log.filter((l) => l.startsWith('blkdiscard')).map((l) => l.split(' ')[1]),
    asked: log.filter((l) => l.startsWith('asinfo')),
  };
}

beforeEach(setUp);
afterEach(tearDown);

test('no mark: starts with its data, nobody asked', () => {
  const r = checkStart();
  expect(r).toMatchObject({ status: 0, wiped: [], asked: [] });
});

test('unstable mark (it took writes outside the cluster), a majority serves without it: wiped, the mark cleared', () => {
  answer(2, 'K1');
  answer(3, 'K1');
  setMark('unstable');
  const r = checkStart();
  expect(r).toMatchObject({ status: 0, wiped: ['/dev/disk/by-id/nvme-A', '/dev/disk/by-id/nvme-B'] });
  expect(r.asked).toHaveLength(2);
  expect(r.stderr).toMatch(/killed unstable and a majority of 2 serves without it \(cluster key K1\): starting empty/);
  expect(existsSync(mark)).toBe(false);
});

test("a mark without a kind (an earlier version's) is unstable: wiped once a majority serves", () => {
  answer(2, 'K1');
  answer(3, 'K1');
  setMark('');
  expect(checkStart().wiped).toHaveLength(2);
});

/** a TCP probe stand-in: `down` hosts refuse the connection (1), the others do not answer (124) */

describe('unstable mark and no majority serving without it: it never starts while another node may serve (decision 0009)', () => {
  test('the other nodes cut off (no answer): it waits, does not start, and the mark stays', () => {
    setMark('unstable');
    const r = checkStart({ PEER_WAIT_MS: '300', TCP_PROBE: probe([]) }, 3000);
    expect(r.status).toBeNull(); // still waiting when killed
    expect(r.wiped).toEqual([]);
    expect(existsSync(mark)).toBe(true);
  });

  test('one other node down (refuses), the other cut off: still waiting', () => {
    setMark('unstable');
    const r = checkStart({ PEER_WAIT_MS: '300', TCP_PROBE: probe([2]) }, 3000);
    expect(r.status).toBeNull();
    expect(existsSync(mark)).toBe(true);
  });

  test.each([
    ['both down (their asd not running: every node was isolated, each waits here)', [2, 3], ['', '']],
    ['one down, one an orphan itself (ERROR)', [2], ['', 'ERROR::unstable-cluster']],
  ])('every other node reachable and in no cluster, %s: starts with its data after the wait', (_w, down, keys) => {
    keys.forEach((k, i) => k && answer(i + 2, k));
    setMark('unstable');
    const r = checkStart({ PEER_WAIT_MS: '1200', TCP_PROBE: probe(down) }, 20_000);
    expect(r).toMatchObject({ status: 0, wiped: [] });
    expect(r.ms).toBeGreaterThanOrEqual(1200);
    expect(r.stderr).toMatch(/every other node is reachable and in no cluster for 1 s .*: starting with its data/);
    expect(existsSync(mark)).toBe(false);
  });

  test('the majority comes back while it waits: wiped then', () => {
    answer(2, 'K1', 3);
    answer(3, 'K1', 3);
    setMark('unstable');
    const r = checkStart({ PEER_WAIT_MS: '300', TCP_PROBE: probe([]) }, 20_000);
    expect(r).toMatchObject({ status: 0 });
    expect(r.wiped).toHaveLength(2);
  });
});

test('a wipe that fails (blkdiscard and dd both fail): check-start fails, the node does not start, the mark stays', () => {
  answer(2, 'K1');
  answer(3, 'K1');
  stub('blkdiscard', 'exit 1');
  stub('dd', 'exit 1');
  setMark('unstable');
  const r = checkStart();
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/wiping the devices failed: not starting \(the mark stays\)/);
  expect(existsSync(mark)).toBe(true);
});

test('silent mark, the two other nodes answer the same cluster key: a majority serves without it, wiped', () => {
  answer(2, 'K1');
  answer(3, 'K1');
  setMark('silent');
  const r = checkStart();
  expect(r.wiped).toHaveLength(2);
  expect(r.stderr).toMatch(/killed silent and a majority of 2 serves without it \(cluster key K1\): starting empty/);
  // the other nodes at their service ports (the conf's mesh seeds at the heartbeat port, minus 2), not this node
  expect(r.asked).toEqual([
    `asinfo -h aerospike-2.utxo.internal -p ${AEROSPIKE_SERVICE_PORT} -v cluster-stable:ignore-migrations=true`,
    `asinfo -h aerospike-3.utxo.internal -p ${AEROSPIKE_SERVICE_PORT} -v cluster-stable:ignore-migrations=true`,
  ]);
  expect(existsSync(mark)).toBe(false);
});

test('silent mark, the majority re-forms during the wait (ERROR, then the key): asked again, wiped', () => {
  answer(2, 'K1', 2);
  answer(3, 'K1', 3);
  setMark('silent');
  const r = checkStart({ PEER_WAIT_MS: '5000' });
  expect(r.wiped).toHaveLength(2);
  expect(r.asked).toHaveLength(6);
});

test('silent mark, no other node answers (every node killed at once): starts with its data after the wait', () => {
  setMark('silent');
  const r = checkStart();
  expect(r.wiped).toEqual([]);
  expect(r.stderr).toMatch(
    /no majority serving without this node \(min-cluster-size 2\) within 1 s: every node may have been killed at once; starting with its data/,
  );
  expect(r.ms).toBeGreaterThanOrEqual(1500);
  // asked about every second until the wait is over
  expect(r.asked.length).toBeGreaterThanOrEqual(4);
  expect(existsSync(mark)).toBe(false);
});

test.each([
  ['disagree', 'K1', 'K2'],
  ['ERROR', 'ERROR::cluster-not-specified-size', 'K1'],
  ['one answers', 'K1', ''],
])('silent mark, the other nodes %s: no majority without it, starts with its data', (_what, a2, a3) => {
  answer(2, a2);
  if (a3) answer(3, a3);
  setMark('silent');
  const r = checkStart({ PEER_WAIT_MS: '300' });
  expect(r.wiped).toEqual([]);
  expect(r.stderr).toMatch(/starting with its data/);
});

test("this node's own answer never counts (it is not running; its name is skipped)", () => {
  answer(1, 'K1');
  answer(2, 'K1');
  setMark('silent');
  const r = checkStart({ PEER_WAIT_MS: '300' });
  expect(r.wiped).toEqual([]);
  expect(r.asked.some((l) => l.includes('aerospike-1.'))).toBe(false);
});

test('min-cluster-size from the conf: 5 nodes, min 3: two others are not a majority, three are', () => {
  writeConf(5, 3);
  answer(2, 'K1');
  answer(3, 'K1');
  setMark('silent');
  expect(checkStart({ PEER_WAIT_MS: '300' }).wiped).toEqual([]);
  answer(4, 'K1');
  setMark('silent');
  expect(checkStart({ PEER_WAIT_MS: '300' }).wiped).toHaveLength(2);
});

test("a silent-marked check-start's longest wait stays far below systemd's start timeout (the package unit's TimeoutSec=600)", () => {
  // the wait, plus one last round asking each other node, plus one retry pause (an unstable-marked one may wait
  // longer, as long as another node may serve: systemd then fails the start and starts it again, the mark kept)
  const worst = WATCHDOG.peerWaitMs + 2 * WATCHDOG.peerInfoTimeoutMs + WATCHDOG.peerRetryMs;
  expect(worst).toBeLessThan(90_000 / 4);
});
