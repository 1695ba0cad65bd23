/**
 * Detection and repair of double-acknowledged outputs (docs/decisions/0006-partitions-on-community-edition.md).
 *
 * On Aerospike Community Edition (AP mode) a network partition can let both sides acknowledge a spend of the same
 * output; when the cluster heals, the records' conflict resolution keeps one of the two spenders and the other
 * acknowledgement is silently lost. This pass takes spends that were acknowledged while the cluster was changing,
 * compares each with the record once the cluster has settled, and resolves every output whose record names another
 * spender the way Teranode resolves a double spend: the spender in the record stands (it is what every reader has
 * seen since the heal), and the acknowledged spender it displaced (the loser) and all of the loser's descendants are
 * marked conflicting (setConflicting: every record of each tx, with the signals it sends).
 *
 * An acknowledged spend whose output is unspent in the record (no second acknowledgement: the spend was lost
 * outright) is reported, not changed: the spender is valid and may be sent again.
 *
 * Idempotent: running it twice over the same spends marks the same txs.
 */
import { InvalidArgumentError } from '../domain/errors';
import type { UtxoStore } from './types';

export interface AcknowledgedSpend {
  txid: string;
  vout: number;
  spendingTxid: string;
}

export interface DoubleAcknowledgedOutput {
  txid: string;
  vout: number;
  /** the spender in the record: it stands */
  recorded: string;
  /** acknowledged spenders the record does not name: marked conflicting with their descendants */
  losers: string[];
}

export interface VerifySpendsReport {
  /** acknowledged spends checked */
  checked: number;
  /** outputs whose record names another spender than an acknowledged one */
  doubleAcknowledged: DoubleAcknowledgedOutput[];
  /** acknowledged spends whose output the record shows unspent */
  unspent: AcknowledgedSpend[];
  /** acknowledged spends whose output could not be read (record missing, or a read error) */
  unreadable: AcknowledgedSpend[];
  /** every tx marked conflicting: the losers and their descendants (losers not in the store are skipped) */
  markedConflicting: string[];
}

/** Most txs a repair follows down the spend graph from the losers (a guard against a runaway walk). */
export const MAX_DESCENDANTS = 100_000;

const CHUNK = 500;

async function descendantsOf(store: UtxoStore, roots: string[]): Promise<string[]> {
  const seen = new Set<string>(roots);
  let level = roots;
  while (level.length > 0 && seen.size < MAX_DESCENDANTS) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += CHUNK) {
      const views = await store.getMany(level.slice(i, i + CHUNK), ['utxos']);
      for (const v of views) {
        if (!v.ok) continue; // not in the store: nothing spends it here
        for (const u of v.value.utxos ?? []) {
          const child = u?.spendingTxid;
          if (child && !seen.has(child)) {
            seen.add(child);
            next.push(child);
          }
        }
      }
    }
    level = next;
  }
  return [...seen];
}

export async function verifyAcknowledgedSpends(
  store: UtxoStore,
  spends: AcknowledgedSpend[],
  options: { repair?: boolean } = {},
): Promise<VerifySpendsReport> {
  if (!Array.isArray(spends)) throw new InvalidArgumentError('spends', 'expected a list');
  const byOutput = new Map<string, AcknowledgedSpend[]>();
  for (const s of spends) {
    const key = `${s.txid}:${s.vout}`;
    if (!byOutput.has(key)) byOutput.set(key, []);
    const list = byOutput.get(key)!;
    if (!list.some((x) => x.spendingTxid === s.spendingTxid)) list.push(s);
  }
  const outputs = [...byOutput.values()].map((l) => l[0]);
  const report: VerifySpendsReport = {
    checked: spends.length,
    doubleAcknowledged: [],
    unspent: [],
    unreadable: [],
    markedConflicting: [],
  };
  for (let i = 0; i < outputs.length; i += CHUNK) {
    const chunk = outputs.slice(i, i + CHUNK);
    const states = await store.getSpendMany(chunk.map((o) => ({ txid: o.txid, vout: o.vout })));
    states.forEach((state, k) => {
      const acked = byOutput.get(`${chunk[k].txid}:${chunk[k].vout}`)!;
      if (!state.ok || state.value.status === 'NOT_FOUND') {
        report.unreadable.push(...acked);
        return;
      }
      const recorded = state.value.spendingTxid;
      if (!recorded) {
        report.unspent.push(...acked);
        return;
      }
      const losers = acked.filter((a) => a.spendingTxid !== recorded).map((a) => a.spendingTxid);
      if (losers.length > 0)
        report.doubleAcknowledged.push({ txid: chunk[k].txid, vout: chunk[k].vout, recorded, losers });
    });
  }
  if (options.repair === false || report.doubleAcknowledged.length === 0) return report;

  const losers = [...new Set(report.doubleAcknowledged.flatMap((d) => d.losers))];
  const present: string[] = [];
  for (let i = 0; i < losers.length; i += CHUNK) {
    const part = losers.slice(i, i + CHUNK);
    (await store.getMany(part, ['conflicting'])).forEach((r, k) => {
      if (r.ok) present.push(part[k]);
    });
  }
  const marked = await descendantsOf(store, present);
  for (let i = 0; i < marked.length; i += CHUNK) await store.setConflicting(marked.slice(i, i + CHUNK), true);
  report.markedConflicting = marked;
  return report;
}
