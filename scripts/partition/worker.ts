/**
 * One client of the partition workload: a separate process with its own store runtime (lib/runtime.ts
 * buildRuntime: its own aerospike client, as one Lambda execution environment), sending its share of the planned
 * spends when they are due, creating each spender it got acknowledged (a validator spends, then stores the tx), and
 * now and then marking created txs mined. Every request and its answer goes to the history file (JSONL).
 *
 * An in-doubt answer is retried (as an HTTP client retries a 503) up to `retries` times, the delay doubling from
 * `retryDelayMs` up to `retryDelayCapMs`; each attempt is its own history event.
 *
 * Run by run.ts: `tsx scripts/partition/worker.ts <job.json>`.
 */
import { appendFileSync, readFileSync } from 'fs';
import { loadConfig } from '../../lib/domain/config';
import { buildRuntime } from '../../lib/runtime';
import type { UtxoStore } from '../../lib/store/types';
import { answerOf, type Answered, type HistoryEvent } from './history';
import type { PlannedSpend } from './plan';

export interface WorkerJob {
  client: string;
  clientIndex: number;
  spends: PlannedSpend[];
  /** epoch ms the workload starts */
  t0: number;
  historyPath: string;
  env: Record<string, string>;
  retries: number;
  retryDelayMs: number;
  /** the retry delay doubles from retryDelayMs up to this */
  retryDelayCapMs?: number;
  /** ms after t0 the fault starts and heals, for the phase labels */
  faultAtMs: number;
  healAtMs: number;
  minedEveryMs: number;
  batchSize: number;
}

async function main(): Promise<void> {
  const job = JSON.parse(readFileSync(process.argv[2], 'utf8')) as WorkerJob;
  const runtime = await startRuntime(job);
  const store: UtxoStore = runtime.store;
  const now = () => Date.now() - job.t0;
  const phase = (t: number) => (t < job.faultAtMs ? 'before' : t < job.healAtMs ? 'fault' : 'after');
  const record = (e: HistoryEvent) => appendFileSync(job.historyPath, `${JSON.stringify(e)}\n`);
  const base = (mode: 'single' | 'batch', start: number) => ({
    client: job.client,
    mode,
    start,
    end: now(),
    phase: phase(start),
  });

  const created: string[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  const createAll = async (items: PlannedSpend[], mode: 'single' | 'batch') => {
    if (items.length === 0) return;
    const start = now();
    if (mode === 'single') {
      for (const s of items) {
        const t = now();
        try {
          await store.create(s.hex);
          record({ kind: 'create', txid: s.txid, ...base('single', t), answer: 'ok' });
          created.push(s.txid);
        } catch (err) {
          record({ kind: 'create', txid: s.txid, ...base('single', t), ...answerOf(err) });
        }
      }
      return;
    }
    let results;
    try {
      results = await store.createMany(items.map((s) => ({ tx: s.hex })));
    } catch (err) {
      for (const s of items) record({ kind: 'create', txid: s.txid, ...base('batch', start), ...answerOf(err) });
      return;
    }
    results.forEach((r, i) => {
      if (r.ok) {
        record({ kind: 'create', txid: items[i].txid, ...base('batch', start), answer: 'ok' });
        created.push(items[i].txid);
      } else record({ kind: 'create', txid: items[i].txid, ...base('batch', start), ...answerOf(r.error) });
    });
  };

  const spendEvent = (s: PlannedSpend) => ({
    kind: 'spend' as const,
    spender: s.txid,
    inputs: [{ txid: s.parent, vout: s.vout }],
  });

  const delay = (attempt: number) => Math.min(job.retryDelayMs * 2 ** attempt, job.retryDelayCapMs ?? Infinity);

  const sendSingle = async (s: PlannedSpend, attempt = 0): Promise<void> => {
    const start = now();
    let answer: Answered;
    try {
      await store.spend({ tx: s.hex });
      answer = { answer: 'ok' };
    } catch (err) {
      answer = answerOf(err);
    }
    record({ ...spendEvent(s), ...base('single', start), ...answer });
    if (answer.answer === 'ok') await createAll([s], 'single');
    else if (answer.answer === 'in-doubt' && attempt < job.retries) {
      await sleep(delay(attempt));
      await sendSingle(s, attempt + 1);
    }
  };

  const sendBatch = async (items: PlannedSpend[], attempt = 0): Promise<void> => {
    const start = now();
    let answers: Answered[];
    try {
      const results = await store.spendMany(items.map((s) => ({ tx: s.hex })));
      answers = results.map((r) => (r.ok ? { answer: 'ok' as const } : answerOf(r.error)));
    } catch (err) {
      answers = items.map(() => answerOf(err));
    }
    items.forEach((s, i) => record({ ...spendEvent(s), ...base('batch', start), ...answers[i] }));
    await createAll(
      items.filter((_, i) => answers[i].answer === 'ok'),
      'batch',
    );
    const again = items.filter((_, i) => answers[i].answer === 'in-doubt');
    if (again.length > 0 && attempt < job.retries) {
      await sleep(delay(attempt));
      await sendBatch(again, attempt + 1);
    }
  };

  let blockId = (job.clientIndex + 1) * 100_000;
  let mined = 0;
  const markMined = async () => {
    const txids = created.slice(mined, mined + 50);
    if (txids.length === 0) return;
    mined += txids.length;
    const start = now();
    const id = ++blockId;
    let answer: Answered;
    try {
      await store.setMined({ txids, blockId: id, blockHeight: 1, subtreeIdx: 0 });
      answer = { answer: 'ok' };
    } catch (err) {
      answer = answerOf(err);
    }
    record({ kind: 'setMined', txids, blockId: id, ...base('batch', start), ...answer });
  };

  const queue = [...job.spends].sort((a, b) => a.dueMs - b.dueMs);
  let next = 0;
  let lastMined = now();
  while (next < queue.length) {
    const t = now();
    const due: PlannedSpend[] = [];
    while (next < queue.length && queue[next].dueMs <= t) due.push(queue[next++]);
    const batch = due.filter((s) => s.mode === 'batch');
    for (let i = 0; i < batch.length; i += job.batchSize) track(sendBatch(batch.slice(i, i + job.batchSize)));
    for (const s of due.filter((x) => x.mode === 'single')) track(sendSingle(s));
    if (t - lastMined >= job.minedEveryMs) {
      lastMined = t;
      track(markMined());
    }
    await sleep(next < queue.length ? Math.max(5, Math.min(50, queue[next].dueMs - now())) : 0);
  }
  while (inFlight.size > 0) await Promise.all([...inFlight]);
  while (mined < created.length) await markMined();
  process.exit(0);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** how long a process that starts during a fault (no majority to connect to) keeps starting, as Lambda re-inits */
const START_RETRY_MS = 60_000;

/** The store runtime, built again every second while it fails and START_RETRY_MS lasts (each failure on stderr). */
async function startRuntime(job: WorkerJob): Promise<Awaited<ReturnType<typeof buildRuntime>>> {
  const started = Date.now();
  for (;;) {
    try {
      return await buildRuntime(loadConfig({ ...process.env, ...job.env }));
    } catch (err) {
      if (Date.now() - started > START_RETRY_MS) throw err;
      console.error(`${job.client}: the store did not start (${(err as Error).message}); starting again in 1 s`);
      await sleep(1000);
    }
  }
}

main().catch((err: unknown) => {
  console.error('partition worker failed:', err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
