/**
 * The scale bench's block: one block through the typed client and the local server, beside its own raw limit
 * (bench/sections/scale.ts). The client runs in a process of its own (block-client.ts), so the CPU this process spends
 * in a phase is the local server's: the handlers, the store, the engine and the native client, what the functions'
 * processes would spend; it yields the shared cores to the server and Aerospike (CLIENT_NICE, common.ts). The block
 * runs BENCH_SCALE_BLOCK_ROUNDS times (default 3), each round on a fresh set with a fresh server; the first round's
 * record operations are recorded and replayed straight on the engine BENCH_SCALE_REPLAY_ROUNDS times (default 3), each
 * phase's replay right after the block's run of the same phase in the same round (the two sides of a phase's ratio
 * seconds apart, not minutes: the machine's speed drifts); each phase's best round counts on both sides, and each
 * round's own ratio is printed beside it. The recording is spilled to a file per phase as soon as the phase is recorded
 * (engine-replay.ts: held in this process it burdened every later garbage collection), and every phase of either side
 * starts after a full collection.
 * BENCH_SCALE_PROFILE=<dir> profiles each phase of the second round, the first without the recorder (of the first
 * when there is one round), and of the first replay round (phase-profile.ts).
 */
import { fork, type ChildProcess } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { availableParallelism, setPriority, tmpdir } from 'os';
import * as path from 'path';
import { PerformanceObserver } from 'perf_hooks';
import { functionDefaults, type FunctionName } from '../../../cdk/config/functions';
import { FileBlobStore } from '../../../lib/blob';
import { createUtxoStore } from '../../../lib/store/utxo-store';
import type { BenchRow } from '../../registry';
import { collectGarbage, EngineRecorder, type ReplayResult } from '../../engine-replay';
import type { BlockPhase, FromBlockClient, ToBlockClient } from './block-client';
import { costPerMillionTxs, PRICES, type Cost } from './cost';
import { profiled } from './phase-profile';
import { asdCpu, type AsdCpu } from '../../capacity/asd-cpu';
import { busyShare, machineShare, parseProcStat, roundByRound, type MachineCpu } from './round-figures';
import {
  SECTION,
  nullQueue,
  BLOCK,
  BLOCK_ROUNDS,
  CLIENT_NICE,
  REPLAY_ROUNDS,
  R,
  B,
  settings,
  progress,
  rawLimit,
  Opened,
  openEngine,
  r0,
  r2,
} from './common';

const PHASES = ['create', 'spend', 'setMined', 'cleanup'] as const;
/** the round BENCH_SCALE_PROFILE profiles: the first the recorder does not slow, if there is one */
const PROFILED_ROUND = Math.min(1, BLOCK_ROUNDS - 1);
type Phase = (typeof PHASES)[number];
/** the function each phase's requests go to in a deployment, and whether through API Gateway */
const FUNCTION_OF: Record<Phase, { fn: FunctionName; viaApi: boolean }> = {
  create: { fn: 'create', viaApi: true },
  spend: { fn: 'spend', viaApi: true },
  setMined: { fn: 'setMined', viaApi: true },
  // a scheduled function in a deployment (the bench sends POST /v1/cleanup)
  cleanup: { fn: 'cleanup', viaApi: false },
};

interface PhaseMeasure {
  ms: number;
  /** the server's (this process's) CPU, user + system, microseconds */
  serverCpuUs: number;
  /** garbage collection in this process, milliseconds (the server's) */
  gcMs: number;
  clientCpuUs: number;
  requests: number;
  ops: number | undefined;
  deleted: number;
  /** the whole machine's busy share over the phase ("93 %"; 'n/a' without /proc/stat) */
  machine: string;
  /** every local asd's CPU over the phase less their idle share, microseconds (BENCH_ASD_PIDS; else undefined) */
  asdCpuUs?: number;
}

export async function benchBlock(opened: Opened, set: string): Promise<BenchRow[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startServer } = require('../../../server/local-server') as typeof import('../../../server/local-server');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { currentRuntime } = require('../../../lib/runtime') as typeof import('../../../lib/runtime');
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-block-'));
  const child = fork(path.join(__dirname, 'block-client.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  lowerPriority(child);
  const ask = messenger(child);
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  });
  gc.observe({ entryTypes: ['gc'] });
  const rows: BenchRow[] = [];
  // BENCH_ASD_PIDS: the nodes' CPU per phase (bench/capacity/slope.ts --exec sets it); their idle rate first
  const asd: AsdCpu | undefined = await asdCpu(progress);
  let recorder: EngineRecorder | undefined;
  const replayed: Opened[] = [];
  try {
    const rawStore = await createUtxoStore({
      engine: opened.engine,
      blobs: new FileBlobStore({ dir }),
      signals: nullQueue,
      settings,
    });
    const raw = await rawLimit(rawStore, opened.engine, 20000);

    const rounds: Map<Phase, PhaseMeasure>[] = [];
    let n = 0;
    let inputs = 0;
    // the block's raw limit: the same record operations issued straight on the engine, on a fresh set each round;
    // each phase's best round counts (as the block's rounds)
    const replay = new Map<string, ReplayResult & { ops?: number; machine: string }>();
    /** each phase's time in each replay round, ms */
    const replayRounds = new Map<string, number[]>();

    /** the replay's side of a round: a fresh set and store, replaying one phase at a time */
    const replaySide = async (round: number, recording: EngineRecorder) => {
      const target = await openEngine(`${set}_raw${round}`);
      replayed.push(target);
      await createUtxoStore({ engine: target.engine, blobs: new FileBlobStore({ dir }), signals: nullQueue, settings });
      const replayer = recording.replayer(target.engine);
      return async (phase: string): Promise<void> => {
        const ops = await target.serverOps?.();
        // the replay's first round is profiled beside the block's (BENCH_SCALE_PROFILE): <dir>/replay-<phase>
        let machine = 'n/a';
        const result = await replayer.run(phase, async (p, work) => {
          const before = machineCpu();
          await (round === 0 && p !== 'parents' ? profiled(`replay-${p}`, work, progress) : work());
          machine = machineShare(before, machineCpu());
        });
        const after = await target.serverOps?.();
        if (phase === 'parents') return;
        replayRounds.set(phase, [...(replayRounds.get(phase) ?? []), result.ms]);
        const prior = replay.get(phase);
        if (prior === undefined || result.ms < prior.ms)
          replay.set(phase, {
            ...result,
            machine,
            ops: ops === undefined || after === undefined ? undefined : after - ops,
          });
      };
    };

    /**
     * The block's side of a round: a fresh server on a fresh set, the block's txs and their parents; the first round
     * records the server's engine calls, spilled to a file as each phase ends. phase(name) measures one phase.
     */
    const blockSide = async (round: number) => {
      const server = await startServer({
        env: {
          UTXO_STORE: opened.storeUrl(`${set}${round}`),
          BLOB_STORE: `file:${dir}`,
          SIGNAL_QUEUE: 'inline',
          UTXO_BATCH_SIZE: String(B),
          BLOCK_HEIGHT_RETENTION: String(R),
          // the shared 2-core machine: a slow moment is measured, not failed
          AEROSPIKE_COMMAND_TIMEOUT_MS: '20000',
          AEROSPIKE_BATCH_TIMEOUT_MS: '60000',
          // the spend acknowledgement guard asks every node within 1 s: a machine loaded far beyond its cores can miss
          // that and fail the block's spends in doubt; SPEND_ACK_GUARD=off in the bench's environment runs without it
          ...(process.env.SPEND_ACK_GUARD ? { SPEND_ACK_GUARD: process.env.SPEND_ACK_GUARD } : {}),
        },
        port: 0,
        log: () => undefined,
        cleanupIntervalSeconds: 0,
      });
      let requests = 0;
      try {
        server.server.on('request', () => requests++);
        progress(`block round ${round + 1}: building the block's txs and its parents`);
        const ready = await ask({ type: 'setup', url: server.url, block: BLOCK });
        if (ready.type === 'ready') [n, inputs] = [ready.txs, ready.inputs];
        if (round === 0) {
          // the server's engine calls, recorded to be issued again straight on the engine (the block's raw limit)
          const runtime = await currentRuntime();
          if (!runtime) throw new Error('block: the local server has no runtime');
          recorder = new EngineRecorder(runtime.engine);
        }
        recorder?.phase('parents');
        await ask({ type: 'phase', phase: 'parents' });
        if (round === 0) recorder?.spill(dir);
      } catch (err) {
        await server.close();
        throw err;
      }
      const phase = async (name: Phase): Promise<PhaseMeasure> => {
        recorder?.phase(name);
        collectGarbage();
        const ops = await opened.serverOps?.();
        const [requests0, gc0] = [requests, gcMs];
        const cpu = process.cpuUsage();
        const machine0 = machineCpu();
        const asd0 = asd?.read();
        const t = performance.now();
        const run = () => ask({ type: 'phase', phase: name as BlockPhase });
        const done = round === PROFILED_ROUND ? await profiled(name, run, progress) : await run();
        const ms = performance.now() - t;
        const used = process.cpuUsage(cpu);
        const asdUs = asd?.since(asd0, ms);
        const machine = machineShare(machine0, machineCpu());
        await new Promise((resolve) => setImmediate(resolve)); // the observer's gc entries of the phase
        const after = await opened.serverOps?.();
        if (round === 0) recorder?.spill(dir);
        return {
          ms,
          serverCpuUs: used.user + used.system,
          gcMs: gcMs - gc0,
          clientCpuUs: done.type === 'done' ? done.cpuUs : 0,
          requests: requests - requests0,
          ops: ops === undefined || after === undefined ? undefined : after - ops,
          deleted: done.type === 'done' ? done.deleted : 0,
          machine,
          asdCpuUs: asdUs,
        };
      };
      return { phase, close: () => server.close() };
    };

    /**
     * One round: the block's side while round < BLOCK_ROUNDS and the replay's while round < REPLAY_ROUNDS, each phase
     * replayed right after the block's run of it (the machine's speed drifts by a third over minutes: a phase's two
     * sides should meet the same moments of it). The first round records.
     */
    const runRound = async (round: number): Promise<void> => {
      const block = round < BLOCK_ROUNDS ? await blockSide(round) : undefined;
      try {
        const replayPhase = recorder && round < REPLAY_ROUNDS ? await replaySide(round, recorder) : undefined;
        if (replayPhase) {
          progress(`round ${round + 1}: the raw engine replays the recorded parents`);
          await replayPhase('parents');
        }
        progress(`round ${round + 1}: phases${block ? '' : ' (replay only)'}${replayPhase ? ', each replayed' : ''}`);
        const measures = new Map<Phase, PhaseMeasure>();
        for (const name of PHASES) {
          if (block) measures.set(name, await block.phase(name));
          await replayPhase?.(name);
        }
        if (block) rounds.push(measures);
      } finally {
        if (round === 0) recorder?.stop();
        await block?.close();
      }
    };

    for (let r = 0; r < Math.max(BLOCK_ROUNDS, REPLAY_ROUNDS); r++) await runRound(r);
    const replayedRounds = replayRounds.get(PHASES[0])?.length ?? 0;
    const replayTotals = Array.from({ length: replayedRounds }, (_, i) =>
      PHASES.reduce((sum, name) => sum + (replayRounds.get(name)?.[i] ?? 0), 0),
    );
    const best = (name: Phase) => rounds.map((r) => r.get(name)!).reduce((a, b) => (b.ms < a.ms ? b : a));
    const roundTotal = (r: Map<Phase, PhaseMeasure>) => PHASES.reduce((s, name) => s + r.get(name)!.ms, 0);
    const bestRound = rounds.reduce((a, b) => (roundTotal(b) < roundTotal(a) ? b : a));

    const memory = functionDefaults();
    const costOf = (name: Phase, m: PhaseMeasure): Cost =>
      costPerMillionTxs({
        cpuUsPerTx: m.serverCpuUs / n,
        memoryMb: memory[FUNCTION_OF[name].fn].memoryMb,
        requestsPerTx: m.requests / n,
        viaApi: FUNCTION_OF[name].viaApi,
      });
    const cores = availableParallelism();
    const money = (usd: number) => `$${usd.toPrecision(3)}`;
    const costNote = (c: Cost, mb: string) =>
      `${money(c.total)} per 1M txs (Lambda ${mb}: duration ${money(c.lambdaDuration)} + requests ` +
      `${money(c.lambdaRequests)}; API Gateway ${money(c.apiGateway)})`;
    const cpuNote = (m: PhaseMeasure) =>
      `server CPU ${r0(m.serverCpuUs / n)} us/tx (GC pauses ${r0((m.gcMs * 1000) / n)} us/tx, wall), client CPU ${r0(m.clientCpuUs / n)} us/tx` +
      (m.asdCpuUs === undefined ? '' : `, asd CPU ${r0(m.asdCpuUs / n)} us/tx (every node, idle share off)`);
    // per record operation: the raw limit is one UDF call on one record per item
    const perOp = (ops: number | undefined, ms: number) =>
      ops === undefined
        ? ''
        : `; ${ops} record ops (${r2(ops / n)} per block tx), ${r0((ops * 1000) / ms)} ops/s = x${r2((ops * 1000) / ms / raw)} raw per op`;
    const seconds = (ms: number[]) => ms.map((v) => (v / 1000).toFixed(1)).join(' / ') + ' s';
    for (const name of PHASES) {
      const m = best(name);
      const r = replay.get(name);
      const count = name === 'cleanup' ? m.deleted : n;
      rows.push({
        section: `${SECTION} block`,
        measure: `${name} (client, local server)`,
        ops: count,
        ms: r0(m.ms),
        opsPerSec: r0((count * 1000) / m.ms),
        note:
          (name === 'cleanup' ? `${m.deleted} parents deleted` : `${r2((n * 1000) / m.ms / raw)} x raw`) +
          (r
            ? `; x${r2(r.ms / m.ms)} of the raw engine doing its record ops (${r0(r.ms)} ms; its process CPU ` +
              `${r0(r.cpuUs / n)} us/tx, so the store's own ${r0((m.serverCpuUs - r.cpuUs) / n)} us/tx); round by ` +
              `round ${roundByRound(
                rounds.map((x) => x.get(name)!.ms),
                replayRounds.get(name) ?? [],
              )}; busy: the server ${busyShare(m.serverCpuUs, m.ms)}, the replay's process ${busyShare(r.cpuUs, r.ms)}; the machine (${cores} cores) ${m.machine} and ${r.machine}`
            : '') +
          `; ${cpuNote(m)}; ${m.requests} requests; ${costNote(costOf(name, m), `${memory[FUNCTION_OF[name].fn].memoryMb} MB`)}` +
          `; rounds ${seconds(rounds.map((x) => x.get(name)!.ms))}` +
          perOp(m.ops, m.ms),
      });
    }
    for (const name of PHASES) {
      const r = replay.get(name);
      if (!r || !recorder) continue;
      const errors = Object.entries(r.errors).map(([code, k]) => `${k} ${code}`);
      rows.push({
        section: `${SECTION} block`,
        measure: `${name}: the same record ops straight on the engine`,
        ops: r.calls,
        ms: r0(r.ms),
        opsPerSec: r.ops === undefined ? 0 : r0((r.ops * 1000) / r.ms),
        note:
          `${r.calls} engine calls (${recorder.methods(name)})` +
          (r.ops === undefined ? '' : `, ${r.ops} record ops`) +
          `; process CPU ${r0(r.cpuUs / n)} us/tx` +
          `; the block's phase at x${r2(r.ms / best(name).ms)} of it` +
          `; rounds ${seconds(replayRounds.get(name) ?? [])}` +
          (errors.length ? `; item errors: ${errors.join(', ')}` : ''),
      });
    }
    // end to end: the best round of the block against the best round of the replay
    const total = roundTotal(bestRound);
    const rawTotal = replayTotals.length ? Math.min(...replayTotals) : 0;
    const sum = (f: (m: PhaseMeasure) => number) => PHASES.reduce((s, name) => s + f(bestRound.get(name)!), 0);
    const allOps = PHASES.every((name) => bestRound.get(name)!.ops !== undefined) ? sum((m) => m.ops ?? 0) : undefined;
    const totalCost = PHASES.map((name) => costOf(name, bestRound.get(name)!)).reduce((a, c) => ({
      durationSecondsPerTx: a.durationSecondsPerTx + c.durationSecondsPerTx,
      lambdaDuration: a.lambdaDuration + c.lambdaDuration,
      lambdaRequests: a.lambdaRequests + c.lambdaRequests,
      apiGateway: a.apiGateway + c.apiGateway,
      total: a.total + c.total,
    }));
    const endToEnd: PhaseMeasure = {
      ms: total,
      serverCpuUs: sum((m) => m.serverCpuUs),
      gcMs: sum((m) => m.gcMs),
      clientCpuUs: sum((m) => m.clientCpuUs),
      requests: sum((m) => m.requests),
      ops: allOps,
      deleted: 0,
      machine: 'n/a',
      asdCpuUs: asd ? sum((m) => m.asdCpuUs ?? 0) : undefined,
    };
    const heapFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(' ')].filter((a) =>
      /^--max-(semi|old)-space-size/.test(a),
    );
    rows.push({
      section: `${SECTION} block`,
      measure: `block end to end (${n} txs, ${inputs} inputs)`,
      ops: n,
      ms: r0(total),
      opsPerSec: r0((n * 1000) / total),
      note:
        (rawTotal
          ? `x${r2(rawTotal / total)} vs the raw engine doing its record ops (${r0(rawTotal)} ms; round by round ` +
            `${roundByRound(rounds.map(roundTotal), replayTotals)}); `
          : '') +
        `x${r2((n * 1000) / total / raw)} vs raw limit ${r0(raw)}/s (signals inline); ${cpuNote(endToEnd)}; ` +
        `${endToEnd.requests} requests; ${costNote(totalCost, 'at each function’s memory')}; ` +
        `best of ${rounds.length} block rounds (${seconds(rounds.map(roundTotal))}) and ${replayTotals.length} ` +
        `replay rounds (${seconds(replayTotals)}); node ${process.version} ${heapFlags.join(' ') || '(default heap)'}; ` +
        `prices ${PRICES.region} listed ${PRICES.listed}${perOp(allOps, total)}`,
    });
  } finally {
    gc.disconnect();
    recorder?.stop();
    for (const target of replayed) await target.close();
    await ask({ type: 'exit' }).catch(() => undefined);
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** The machine's CPU counters now; undefined where there is no /proc/stat (not Linux). */
function machineCpu(): MachineCpu | undefined {
  try {
    return parseProcStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** The client's process yields the shared cores (CLIENT_NICE); where the system refuses, the run says so and goes on. */
function lowerPriority(child: ChildProcess): void {
  if (CLIENT_NICE === 0 || child.pid === undefined) return;
  try {
    setPriority(child.pid, CLIENT_NICE);
  } catch (err) {
    progress(`block: the client's priority stays as it is (${(err as Error).message}): it competes for the cores`);
  }
}

/** Sends one message to the block client and waits for its answer (one at a time); an `error` answer throws. */
function messenger(child: ChildProcess): (m: ToBlockClient) => Promise<FromBlockClient> {
  const waiting: ((m: FromBlockClient) => void)[] = [];
  let exited: string | undefined;
  child.on('message', (m: FromBlockClient) => waiting.shift()?.(m));
  child.on('exit', (code, signal) => {
    exited = `the block client exited (${signal ?? code})`;
    for (const w of waiting.splice(0)) w({ type: 'error', message: exited });
  });
  return async (m) => {
    if (exited) throw new Error(exited);
    if (m.type === 'exit') {
      child.send(m);
      return { type: 'error', message: 'exit' };
    }
    const answer = await new Promise<FromBlockClient>((resolve) => {
      waiting.push(resolve);
      child.send(m);
    });
    if (answer.type === 'error') throw new Error(answer.message);
    return answer;
  };
}
