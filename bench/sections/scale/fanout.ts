/** The scale bench's fan-out: one parent's many outputs spent by concurrent batches, a hot key (bench/sections/scale.ts). */
import type { BlobStore } from '../../../lib/blob/port';
import { createUtxoStore } from '../../../lib/store/utxo-store';
import { makeTx, rootTx } from '../../../test/fixtures/txs';
import type { BenchRow } from '../../registry';
import {
  SECTION,
  nullQueue,
  FANOUT,
  settings,
  progress,
  chunks,
  inFlight,
  must,
  rawLimit,
  Opened,
  r0,
  r2,
} from './common';

export async function benchFanout(opened: Opened, blobs: BlobStore): Promise<BenchRow[]> {
  const store = await createUtxoStore({ engine: opened.engine, blobs, signals: nullQueue, settings });
  await store.setChainTip(1000);
  const raw = await rawLimit(store, opened.engine, Math.min(FANOUT, 10000));
  progress('fan-out');
  const parent = rootTx(FANOUT);
  must(await store.createMany([{ tx: parent.hex }]), 'fan-out parent');
  const children = Array.from({ length: FANOUT }, (_, vout) => makeTx({ inputs: [{ parent, vout }] }).hex);
  let failed = 0;
  const codes = new Set<string>();
  let firstError = '';
  const ms = await inFlight(chunks(children, 100), 32, async (b) => {
    for (const r of await store.spendMany(b.map((tx) => ({ tx })))) {
      if (!r.ok) {
        failed++;
        codes.add(r.error.code);
        firstError ||= r.error.message;
      }
    }
  });
  const rate = (FANOUT * 1000) / ms;
  return [
    {
      section: `${SECTION} fan-out`,
      measure: `1 parent, ${FANOUT} outputs; children by spendMany 100 a batch, 32 in flight`,
      ops: FANOUT - failed,
      ms: r0(ms),
      opsPerSec: r0(rate),
      note: `${failed} failed${codes.size ? ` (${[...codes].join(', ')}: ${firstError})` : ''}; x${r2(rate / raw)} vs raw limit ${r0(raw)}/s`,
    },
  ];
}
