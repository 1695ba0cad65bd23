/** The scale bench's block: one block through the typed client and the local server, beside its own raw limit (bench/sections/scale.ts). */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { FileBlobStore } from '../../../lib/blob';
import { createUtxoStore } from '../../../lib/store/utxo-store';
import { makeTx, rootTx, type Fixture } from '../../../test/fixtures/txs';
import type { BenchRow } from '../../registry';
import { EngineRecorder, type ReplayResult } from '../../engine-replay';
import {
  SECTION,
  nullQueue,
  BLOCK,
  IN_FLIGHT,
  REPLAY_ROUNDS,
  R,
  B,
  settings,
  progress,
  chunks,
  inFlight,
  must,
  rawLimit,
  Opened,
  openEngine,
  r0,
  r2,
} from './common';

export async function benchBlock(opened: Opened, set: string): Promise<BenchRow[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startServer } = require('../../../server/local-server') as typeof import('../../../server/local-server');
  const { localClient } = await import('@bsv-utxo-store/client');
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-block-'));
  const server = await startServer({
    env: {
      UTXO_STORE: opened.storeUrl(set),
      BLOB_STORE: `file:${dir}`,
      SIGNAL_QUEUE: 'inline',
      UTXO_BATCH_SIZE: String(B),
      BLOCK_HEIGHT_RETENTION: String(R),
      // the shared 2-core machine: a slow moment is measured, not failed
      AEROSPIKE_COMMAND_TIMEOUT_MS: '20000',
      AEROSPIKE_BATCH_TIMEOUT_MS: '60000',
    },
    port: 0,
    log: () => undefined,
    cleanupIntervalSeconds: 0,
  });
  const client = localClient(server.url, { batching: false });
  const rows: BenchRow[] = [];
  // the server's engine calls, recorded to be issued again straight on the engine (the block's raw limit)
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { currentRuntime } = require('../../../lib/runtime') as typeof import('../../../lib/runtime');
  const runtime = await currentRuntime();
  if (!runtime) throw new Error('block: the local server has no runtime');
  const recorder = new EngineRecorder(runtime.engine);
  const replayed: Opened[] = [];
  try {
    const rawStore = await createUtxoStore({
      engine: opened.engine,
      blobs: new FileBlobStore({ dir }),
      signals: nullQueue,
      settings,
    });
    const raw = await rawLimit(rawStore, opened.engine, 20000);

    progress('block: parents');
    recorder.phase('parents');
    // the previous block: parents with 4 outputs each, mined
    const parents = Array.from({ length: Math.ceil((BLOCK * 2) / 4) }, () => rootTx(4));
    await client.forceChainTip(1000);
    const prev = { minedBlocks: [{ blockId: 999, blockHeight: 999, subtreeIdx: 0 }] };
    await inFlight(chunks(parents, 1000), IN_FLIGHT, async (b) =>
      must(await client.createMany(b.map((p) => ({ tx: p.hex, ...prev }))), 'parents'),
    );
    // the block: 1-3 inputs from the parents' outputs, 2 outputs; three large txs that paginate and are external
    const outputs = parents.flatMap((p) => [0, 1, 2, 3].map((vout) => ({ parent: p, vout })));
    const txs: Fixture[] = [];
    let at = 0;
    for (let i = 0; i < BLOCK - 3 && at < outputs.length; i++) {
      const k = 1 + (i % 3);
      txs.push(makeTx({ inputs: outputs.slice(at, at + k), outputs: [400, 400] }));
      at += k;
    }
    const large = Array.from({ length: 3 }, () => rootTx(35000));
    // wall time and, on Aerospike, the record operations the server did in each phase
    const phases: [string, number, number | undefined][] = [];
    const phase = async (name: string, fn: () => Promise<void>) => {
      recorder.phase(name);
      const ops = await opened.serverOps?.();
      const t = performance.now();
      await fn();
      const ms = performance.now() - t;
      const after = await opened.serverOps?.();
      phases.push([name, ms, ops === undefined || after === undefined ? undefined : after - ops]);
    };
    progress('block: phases');
    await phase('create', async () => {
      await inFlight([...chunks(txs, 1000), ...large.map((l) => [l])], IN_FLIGHT, async (b) =>
        must(await client.createMany(b.map((t) => ({ tx: t.hex }))), 'block createMany'),
      );
    });
    await phase('spend', async () => {
      await inFlight(chunks(txs, 1000), IN_FLIGHT, async (b) =>
        must(await client.spendMany(b.map((t) => t.hex)), 'block spendMany'),
      );
    });
    const all = [...txs, ...large].map((t) => t.txid);
    await phase('setMined', async () => {
      await client.forceChainTip(1001);
      await client.setMinedMany(all, { blockId: 1001, blockHeight: 1001, subtreeIdx: 0 }, { concurrency: IN_FLIGHT });
    });
    let deleted = 0;
    await phase('cleanup', async () => {
      await client.forceChainTip(1001 + R + 1);
      for (let pass = 0; pass < 100; pass++) {
        const report = await client.cleanup(60);
        deleted += report.deleted;
        if (!report.more) break;
      }
    });
    const total = phases.reduce((s, [, ms]) => s + ms, 0);
    const n = all.length;

    // the block's raw limit: the same record operations issued straight on the engine, on a fresh set each round;
    // each phase's best round counts (as the raw limit's rounds: the least disturbed run of the engine)
    recorder.stop();
    const replay = new Map<string, ReplayResult & { ops?: number }>();
    for (let round = 0; round < REPLAY_ROUNDS; round++) {
      progress(`block: the raw engine replays the recorded record operations (round ${round + 1})`);
      const target = await openEngine(`${set}_raw${round}`);
      replayed.push(target);
      await createUtxoStore({ engine: target.engine, blobs: new FileBlobStore({ dir }), signals: nullQueue, settings });
      const ops = new Map<string, number | undefined>();
      let last: [string | undefined, number | undefined] = [undefined, undefined];
      const results = await recorder.replay(target.engine, async (next) => {
        const count = await target.serverOps?.();
        if (last[0] !== undefined)
          ops.set(last[0], count === undefined || last[1] === undefined ? undefined : count - last[1]);
        last = [next, count];
      });
      for (const [name, result] of results) {
        const best = replay.get(name);
        if (best === undefined || result.ms < best.ms) replay.set(name, { ...result, ops: ops.get(name) });
      }
    }
    const rawTotal = phases.reduce((s, [name]) => s + (replay.get(name)?.ms ?? 0), 0);

    // per record operation: the raw limit is one UDF call on one record per item
    const perOp = (ops: number | undefined, ms: number) =>
      ops === undefined
        ? ''
        : `; ${ops} record ops (${r2(ops / n)} per block tx), ${r0((ops * 1000) / ms)} ops/s = x${r2((ops * 1000) / ms / raw)} raw per op`;
    for (const [name, ms, ops] of phases) {
      rows.push({
        section: `${SECTION} block`,
        measure: `${name} (client, local server)`,
        ops: name === 'cleanup' ? deleted : n,
        ms: r0(ms),
        opsPerSec: r0(((name === 'cleanup' ? deleted : n) * 1000) / ms),
        note:
          (name === 'cleanup' ? `${deleted} parents deleted` : `${r2((n * 1000) / ms / raw)} x raw`) + perOp(ops, ms),
      });
    }
    for (const [name, ms] of phases) {
      const r = replay.get(name);
      if (!r) continue;
      const errors = Object.entries(r.errors).map(([code, k]) => `${k} ${code}`);
      const ops = r.ops;
      rows.push({
        section: `${SECTION} block`,
        measure: `${name}: the same record ops straight on the engine`,
        ops: r.calls,
        ms: r0(r.ms),
        opsPerSec: ops === undefined ? 0 : r0((ops * 1000) / r.ms),
        note:
          `${r.calls} engine calls (${recorder.methods(name)})` +
          (ops === undefined ? '' : `, ${ops} record ops`) +
          `; the block's phase at x${r2(r.ms / ms)} of it` +
          (errors.length ? `; item errors: ${errors.join(', ')}` : ''),
      });
    }
    const allOps = phases.every(([, , ops]) => ops !== undefined)
      ? phases.reduce((s, [, , ops]) => s + (ops ?? 0), 0)
      : undefined;
    rows.push({
      section: `${SECTION} block`,
      measure: `block end to end (${n} txs, ${txs.reduce((s, t) => s + t.tx.inputs.length, 0)} inputs)`,
      ops: n,
      ms: r0(total),
      opsPerSec: r0((n * 1000) / total),
      note:
        `x${r2(rawTotal / total)} vs the raw engine doing its record ops (${r0(rawTotal)} ms); ` +
        `x${r2((n * 1000) / total / raw)} vs raw limit ${r0(raw)}/s (signals inline)${perOp(allOps, total)}`,
    });
  } finally {
    recorder.stop();
    for (const target of replayed) await target.close();
    await client.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
