/**
 * The node watchdog script's `run` (cdk/node-watchdog.ts, decisions 0007 and 0009) with bash against a stand-in asd
 * and stub asinfo: the mark records why; a silent node is killed only while a majority could go on without it, an
 * unstable one only while a majority may serve without it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import * as path from 'node:path';
import { answer, bin, dir, env, mark, probe, script, setUp, stub, tearDown, answers } from './watchdog-script-fixture';

beforeEach(setUp);
afterEach(tearDown);

describe('run: the mark records why; a silent node is killed only while a majority could go on without it', () => {
  /**
   * runs the watchdog against a stand-in asd (a sleep) whose asinfo answers `answersInTurn` in turn, then hangs as a
   * paused asd does (the watchdog's timeout ends the question) until the file `resumed` exists, then answers K1: a
   * question pending when the cluster resumes is answered, as a real paused asd answers it (once the file `slow`
   * exists: the first question after the resume not in time, the others in 350 ms: after the kill round's 300 ms,
   * within a regular question's 500 ms; the other nodes' questions then wait, as a paused asd's do, until they
   * answer). The other nodes (asinfo
   * -h/-p) answer from their answer files (answer()). Stops after a kill or `windowMs`
   */
  async function runWatchdog(
    answersInTurn: string[],
    windowMs = 8000,
    extraEnv: Record<string, string> = {},
  ): Promise<{ killed: boolean; stderr: string; mark: string }> {
    const asd = spawn('sleep', ['60'], { stdio: 'ignore' });
    const state = path.join(dir, 'state');
    writeFileSync(state, `active ${asd.pid}\n`);
    stub('systemctl', `read -r s p < "${state}"; case "$3" in MainPID) echo "$p" ;; ActiveState) echo "$s" ;; esac`);
    const turn = path.join(dir, 'turn');
    writeFileSync(turn, '0');
    const list = answersInTurn.map((a) => `'${a}'`).join(' ');
    stub(
      'asinfo',
      `if [ "$1" = -h ]; then f="${answers}/$2:$4"; [ -f "${dir}/slow" ] && while [ ! -f "$f" ]; do sleep 0.02; done
[ -f "$f" ] || exit 1; cat "$f"; echo; exit 0; fi
slow() { [ -f "${dir}/slow" ] || return 0; m=$(cat "${dir}/after" 2>/dev/null || echo 0); echo $((m + 1)) > "${dir}/after"; [ "$m" -eq 0 ] && sleep 1; sleep 0.35; }
[ -f "${dir}/resumed" ] && { slow; echo K1; exit 0; }
a=(${list}); n=$(cat "${turn}"); echo $((n + 1)) > "${turn}"; [ "$n" -lt \${#a[@]} ] && { echo "\${a[$n]}"; exit 0; }
while [ ! -f "${dir}/resumed" ]; do sleep 0.02; done; slow; echo K1`,
    );
    const file = path.join(dir, 'aerospike-watchdog');
    writeFileSync(file, script());
    const wd = spawn('bash', [file, 'run'], {
      env: env(extraEnv),
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    wd.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    let killed = false;
    const exited = new Promise<void>((r) =>
      asd.once('exit', (_code, signal) => {
        killed = signal === 'SIGKILL';
        r();
      }),
    );
    const timer = setTimeout(() => asd.kill('SIGTERM'), windowMs);
    await exited;
    clearTimeout(timer);
    process.kill(-wd.pid!, 'SIGKILL');
    return { killed, stderr, mark: existsSync(mark) ? readFileSync(mark, 'utf8').trim() : '' };
  }

  /** after `ms`, the other nodes answer K1 again; with `self`, this node's asd resumes too (the file `resumed`) */
  function resumeAfter(ms: number, self: boolean): void {
    setTimeout(() => {
      if (self) writeFileSync(path.join(dir, 'resumed'), '');
      answer(2, 'K1');
      answer(3, 'K1');
    }, ms);
  }

  test('a member then silence, the two other nodes answer: killed, the mark says silent', async () => {
    answer(2, 'K1');
    answer(3, 'ERROR::unstable-cluster');
    const r = await runWatchdog(['K1']);
    expect(r.killed).toBe(true);
    expect(r.stderr).toMatch(/asd silent for \d+ ms: SIGKILL/);
    expect(r.mark).toBe('silent');
  }, 15_000);

  test('a member, an orphan (ERROR), then silence: killed, the mark stays unstable', async () => {
    answer(2, 'K1');
    answer(3, 'K1');
    const r = await runWatchdog(['K1', 'ERROR::unstable-cluster']);
    expect(r.killed).toBe(true);
    expect(r.mark).toBe('unstable');
  }, 15_000);

  test('silence while the other nodes are silent too (a whole-cluster stall): not killed, said once', async () => {
    const r = await runWatchdog(['K1'], 4500);
    expect(r.killed).toBe(false);
    expect(r.stderr).not.toMatch(/SIGKILL/);
    const held = r.stderr.match(/only 0 of the other nodes answer \(min-cluster-size 2\): a whole-cluster stall/g);
    expect(held).toHaveLength(1);
    expect(r.mark).toBe('silent');
  }, 15_000);

  test('silence with only one other node answering (below min-cluster-size 2): not killed', async () => {
    answer(2, 'K1');
    const r = await runWatchdog(['K1'], 4000);
    expect(r.killed).toBe(false);
    expect(r.stderr).toMatch(/only 1 of the other nodes answer/);
  }, 15_000);

  test('a stall, then the other nodes run again while this node is still silent: killed then', async () => {
    resumeAfter(3500, false);
    const started = Date.now();
    const r = await runWatchdog(['K1'], 9000);
    expect(r.killed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3500);
    // not on the first round in which they answer again (it may have begun during the stall): one round later
    expect(r.stderr).toMatch(
      /a whole-cluster stall, not killed[^]*answer again after a whole-cluster stall: asked once more[^]*asd silent for \d+ ms: SIGKILL/,
    );
  }, 15_000);

  test('a stall, then the whole cluster resumes (this node too): not killed', async () => {
    resumeAfter(3500, true);
    const r = await runWatchdog(['K1'], 6000);
    expect(r.killed).toBe(false);
    expect(r.stderr).toMatch(/a whole-cluster stall, not killed/);
    expect(r.stderr).not.toMatch(/SIGKILL/);
    // a member again: the mark is cleared
    expect(r.mark).toBe('');
  }, 15_000);

  describe('an unstable node is killed only while a majority may serve without it (rule 6: two nodes killed at once)', () => {
    // an orphan from its second answer on; UNSTABLE_MS shortened to 1.5 s
    const orphan = (extra: Record<string, string>, windowMs = 10_000) =>
      runWatchdog(['K1', ...Array<string>(60).fill('ERROR::unstable-cluster')], windowMs, {
        UNSTABLE_MS: '1500',
        ...extra,
      });

    test.each([
      ['the two other nodes serve a cluster without it', [2, 3]],
      ['the two other nodes cut off (no answer: they may serve)', []],
    ])(
      '%s: killed, the mark says unstable',
      async (_w, up) => {
        answer(2, 'K2');
        answer(3, 'K2');
        const r = await orphan({ TCP_PROBE: probe([], up) });
        expect(r.killed).toBe(true);
        expect(r.stderr).toMatch(/asd unstable for \d+ ms: SIGKILL/);
        expect(r.mark).toBe('unstable');
      },
      15_000,
    );

    test.each([
      ['both refuse the connection (killed, restarting or loading their data)', [2, 3], [], {}],
      ['one refuses, the other answers ERROR (up, in no cluster yet)', [2], [3], { 3: 'ERROR::unstable-cluster' }],
      ['one refuses, the other cut off: one may serve, below min-cluster-size 2', [2], [], {}],
    ])(
      '%s: not killed, counting again',
      async (_w, down, up, keys) => {
        for (const [i, k] of Object.entries(keys)) answer(Number(i), k);
        const r = await orphan({ TCP_PROBE: probe(down, up) }, 8000);
        expect(r.killed).toBe(false);
        expect(r.stderr).not.toMatch(/SIGKILL/);
        expect(r.stderr).toMatch(/asd unstable for \d+ ms but only [01] of the other nodes may serve .*not killed/);
        // counted again from the hold: about one message per UNSTABLE_MS (1.5 s), not one per poll (250 ms)
        expect(r.stderr.match(/not killed, counting again/g)!.length).toBeLessThanOrEqual(6);
        expect(r.mark).toBe('unstable');
      },
      15_000,
    );

    test('the others refuse, then serve a cluster without it: killed a whole UNSTABLE_MS after the hold', async () => {
      answer(2, 'K2');
      answer(3, 'K2');
      // the first round (one probe per other node) is refused, every later one connects
      const count = path.join(dir, 'probes');
      const file = path.join(bin, 'probe');
      writeFileSync(
        file,
        `#!/bin/bash\nn=$(( $(cat "${count}" 2>/dev/null || echo 0) + 1 )); echo $n > "${count}"\n[ $n -le 2 ] && exit 1\nexit 0\n`,
      );
      chmodSync(file, 0o755);
      const r = await orphan({ TCP_PROBE: file }, 12_000);
      expect(r.killed).toBe(true);
      const [held, killed] = [/not killed, counting again/, /asd unstable for (\d+) ms: SIGKILL/].map((re) =>
        r.stderr.split('\n').findIndex((l) => re.test(l)),
      );
      expect(held).toBeGreaterThanOrEqual(0);
      expect(killed).toBeGreaterThan(held);
      // the count started again at the hold: the kill comes a whole UNSTABLE_MS after it
      expect(Number(/asd unstable for (\d+) ms: SIGKILL/.exec(r.stderr)![1])).toBeGreaterThanOrEqual(1500);
    }, 20_000);
  });

  test('a stall, then the whole cluster resumes, this node answering slower than the kill round: not killed', async () => {
    // the e2e's whole-cluster stall: the nodes resume together and answer pending questions in turn; a kill round
    // begun during the stall saw the others answer and this node not within its 300 ms
    writeFileSync(path.join(dir, 'slow'), '');
    resumeAfter(3500, true);
    const r = await runWatchdog(['K1'], 7000);
    expect(r.killed).toBe(false);
    expect(r.stderr).not.toMatch(/SIGKILL/);
    expect(r.stderr).toMatch(/2 of the other nodes answer again after a whole-cluster stall: asked once more/);
    expect(r.mark).toBe('');
  }, 15_000);
});
