/**
 * Reading the records the drill checks, through the store: the final state the partition checker compares a history
 * with (every output a spend of the history named: its spender; every tx of the history: its blocks), and the facts
 * of each tx's master the cleanup invariants read (cleanup-invariants.ts).
 */
import type { UtxoStore } from '../../lib/store/types';
import { outpointKey, type FinalState, type Outpoint } from '../partition/history';
import type { TxFacts } from './cleanup-invariants';
import type { DrillEvent } from './events';

const CHUNK = 500;

/** Every txid the history names (created, spending, spent, mined), in first-seen order. */
export function txidsOf(events: DrillEvent[]): string[] {
  const ids = new Set<string>();
  for (const e of events) {
    if (e.kind === 'create') ids.add(e.txid);
    else if (e.kind === 'spend') {
      ids.add(e.spender);
      e.inputs.forEach((i) => ids.add(i.txid));
    } else e.txids.forEach((t) => ids.add(t));
  }
  return [...ids];
}

export async function readFinal(store: UtxoStore, events: DrillEvent[]): Promise<FinalState> {
  const outpoints = new Map<string, Outpoint>();
  for (const e of events) if (e.kind === 'spend') for (const i of e.inputs) outpoints.set(outpointKey(i), i);
  const spenders: FinalState['spenders'] = {};
  const refs = [...outpoints.values()];
  for (let i = 0; i < refs.length; i += CHUNK) {
    const chunk = refs.slice(i, i + CHUNK);
    (await store.getSpendMany(chunk)).forEach((r, k) => {
      // unreadable (its record is missing): absent from the map
      if (r.ok && r.value.status !== 'NOT_FOUND') spenders[outpointKey(chunk[k])] = r.value.spendingTxid ?? null;
    });
  }
  const txs: FinalState['txs'] = {};
  for (const [txid, f] of Object.entries(await readFacts(store, txidsOf(events)))) {
    txs[txid] = { blockIds: f.blockIds, conflicting: f.conflicting };
  }
  return { spenders, txs };
}

const FACT_FIELDS = [
  'blockIDs',
  'blockHeights',
  'unminedSince',
  'deleteAtHeight',
  'preserveUntil',
  'spentUtxos',
  'recordUtxos',
  'totalExtraRecs',
  'spentExtraRecs',
  'reassignments',
  'conflicting',
  'locked',
  'creating',
  'deleting',
];

const num = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
const nums = (v: unknown): number[] => (Array.isArray(v) ? v.map((x) => num(x) ?? NaN) : []);

/** The facts of every tx of `txids` whose master is in the store (a missing one is absent). */
export async function readFacts(store: UtxoStore, txids: string[]): Promise<Record<string, TxFacts>> {
  const out: Record<string, TxFacts> = {};
  for (let i = 0; i < txids.length; i += CHUNK) {
    const chunk = txids.slice(i, i + CHUNK);
    (await store.getMany(chunk, FACT_FIELDS)).forEach((r, k) => {
      if (!r.ok) return;
      const v = r.value;
      out[chunk[k]] = {
        txid: chunk[k],
        blockIds: nums(v.blockIDs),
        blockHeights: nums(v.blockHeights),
        unminedSince: num(v.unminedSince),
        deleteAtHeight: num(v.deleteAtHeight),
        preserveUntil: num(v.preserveUntil),
        spentUtxos: num(v.spentUtxos) ?? 0,
        recordUtxos: num(v.recordUtxos) ?? 0,
        totalExtraRecs: num(v.totalExtraRecs) ?? 0,
        spentExtraRecs: num(v.spentExtraRecs) ?? 0,
        reassignments: v.reassignments !== undefined && v.reassignments !== null,
        conflicting: v.conflicting === true,
        locked: v.locked === true,
        creating: v.creating === true,
        deleting: v.deleting === true,
      };
    });
  }
  return out;
}
