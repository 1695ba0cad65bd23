/**
 * The drill's steady load: a process of its own with its own store runtime (lib/runtime.ts, as one Lambda execution
 * environment), running `chains` chains side by side at about `rate` steps a second in all. A step takes the oldest
 * unspent output of the pool, spends it with a new one-output tx (every `rivalEvery`-th step also a rival spender of
 * the same output, sent at the same moment: one of the two wins), stores the winner (a validator spends, then
 * creates) and puts its output back in the pool. Every `minedEveryMs` the txs created since are marked mined in a new
 * block one height above the last. Every request and its answer goes to the history (events.ts).
 *
 * An in-doubt answer is sent again (same spender, same tx, same block) up to RETRIES times, as a caller retries a
 * 503; an output whose spend stays in doubt or refused leaves the pool. SIGTERM stops it: the chains finish their
 * step, the txs created since the last block stay unmined (cleanup must keep their parents), and it exits 0.
 *
 * Run by run.ts: `tsx scripts/drill/load.ts <job.json>`.
 */
import { appendFileSync, readFileSync } from 'fs';
import { UtxoStoreError } from '../../lib/domain/errors';
import { loadConfig } from '../../lib/domain/config';
import { buildRuntime } from '../../lib/runtime';
import type { Answer } from '../partition/history';
import type { DrillEvent } from './events';
import { spenderTx, type BuiltTx, type Utxo } from './txs';

export interface LoadJob {
  /** the store's environment (UTXO_STORE, ...) */
  env: Record<string, string>;
  historyPath: string;
  /** epoch ms the history's times count from */
  t0: number;
  utxos: Utxo[];
  chains: number;
  /** steps a second, all chains together */
  rate: number;
  rivalEvery: number;
  minedEveryMs: number;
  /** the first block this load mines; the next ones follow one id and one height above */
  firstBlock: { id: number; height: number };
}

const RETRIES = 8;
const RETRY_DELAY_MS = 500;

function classify(err: unknown): { answer: Answer; code: string } {
  if (err instanceof UtxoStoreError) {
    return { answer: err.code === 'STORAGE_ERROR' ? 'in-doubt' : 'refused', code: err.code };
  }
  return { answer: 'in-doubt', code: err instanceof Error ? `THROWN ${err.message.slice(0, 80)}` : 'THROWN' };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const job = JSON.parse(readFileSync(process.argv[2], 'utf8')) as LoadJob;
  const { store } = await buildRuntime(loadConfig({ ...process.env, ...job.env }));
  let stopping = false;
  process.on('SIGTERM', () => (stopping = true));
  const now = () => Date.now() - job.t0;
  const record = (e: DrillEvent) => appendFileSync(job.historyPath, `${JSON.stringify(e)}\n`);
  const base = (start: number) => ({ client: 'load', mode: 'single' as const, start, end: now() });

  /** sends `send` until it answers other than in doubt (or RETRIES times), recording every attempt */
  const retrying = async (send: (attempt: number) => Promise<{ answer: Answer; code?: string }>) => {
    for (let attempt = 0; ; attempt++) {
      const a = await send(attempt);
      if (a.answer !== 'in-doubt' || attempt >= RETRIES) return a.answer;
      await sleep(RETRY_DELAY_MS);
    }
  };

  const spend = (tx: BuiltTx, parent: Utxo) =>
    retrying(async () => {
      const start = now();
      let a: { answer: Answer; code?: string };
      try {
        await store.spend({ tx: tx.hex });
        a = { answer: 'ok' };
      } catch (err) {
        a = classify(err);
      }
      const inputs = [{ txid: parent.txid, vout: parent.vout }];
      record({ kind: 'spend', spender: tx.txid, inputs, hex: tx.hex, ...base(start), ...a });
      return a;
    });

  const create = (tx: BuiltTx) =>
    retrying(async (attempt) => {
      const start = now();
      let a: { answer: Answer; code?: string };
      try {
        await store.create(tx.hex);
        a = { answer: 'ok' };
      } catch (err) {
        a = classify(err);
        // an earlier attempt, in doubt, was applied: stored, as the caller now knows
        if (attempt > 0 && a.code === 'TX_EXISTS') a = { answer: 'ok', code: 'TX_EXISTS' };
      }
      record({ kind: 'create', txid: tx.txid, hex: tx.hex, ...base(start), ...a });
      return a;
    });

  const pool: Utxo[] = [...job.utxos];
  const created: string[] = [];
  const counts = { steps: 0, rivals: 0, won: 0, abandoned: 0, blocks: 0 };
  const startedAt = Date.now();
  let slots = 0;

  const chain = async () => {
    while (!stopping) {
      const due = startedAt + (slots++ * 1000) / job.rate;
      if (due > Date.now()) await sleep(due - Date.now());
      const u = pool.shift();
      if (!u) {
        await sleep(50);
        continue;
      }
      const step = ++counts.steps;
      const child = spenderTx(u, 0);
      const rival = step % job.rivalEvery === 0 ? spenderTx(u, 1) : undefined;
      if (rival) counts.rivals++;
      const [a, b] = await Promise.all([spend(child, u), rival ? spend(rival, u) : undefined]);
      const winner = a === 'ok' ? child : b === 'ok' ? rival : undefined;
      if (winner === rival && rival) counts.won++;
      if (!winner || (await create(winner)) !== 'ok') {
        counts.abandoned++;
        continue;
      }
      created.push(winner.txid);
      pool.push(...winner.outputs);
    }
  };

  let block = { ...job.firstBlock };
  const mine = async () => {
    const txids = created.splice(0);
    if (txids.length === 0) return;
    const { id, height } = block;
    block = { id: id + 1, height: height + 1 };
    counts.blocks++;
    await retrying(async () => {
      const start = now();
      let a: { answer: Answer; code?: string };
      try {
        await store.setMined({ txids, blockId: id, blockHeight: height, subtreeIdx: 0 });
        a = { answer: 'ok' };
      } catch (err) {
        a = classify(err);
      }
      record({ kind: 'setMined', txids, blockId: id, blockHeight: height, ...base(start), mode: 'batch', ...a });
      return a;
    });
  };
  const miner = async () => {
    while (!stopping) {
      await sleep(job.minedEveryMs);
      if (!stopping) await mine();
    }
  };

  await Promise.all([miner(), ...Array.from({ length: job.chains }, chain)]);
  console.log(JSON.stringify({ load: counts, unmined: created.length, pool: pool.length }));
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error('drill load failed:', err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
