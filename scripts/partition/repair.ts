/**
 * The detection and repair pass of the experiment, as an operator runs it after a partition: every tx the clients
 * stored (a validator stores a tx once its spends were acknowledged) is verified with the store's verifySpenders
 * (lib/store/verify-spends.ts), which marks each tx whose acknowledged spend did not stand, and its descendants,
 * conflicting.
 */
import type { UtxoStore, VerifySpendersReport } from '../../lib/store/types';
import type { HistoryEvent } from './history';

export interface RepairReport {
  checked: number;
  /** outputs found spent by another tx than a stored spender of theirs (double-acknowledged) */
  found: number;
  /** stored spenders whose output is unspent (a lost spend without a second acknowledgement) */
  unspent: number;
  /** txs marked conflicting (losers and descendants) */
  marked: number;
  details: VerifySpendersReport;
}

export async function repairDoubleAcknowledged(store: UtxoStore, history: HistoryEvent[]): Promise<RepairReport> {
  const created = [...new Set(history.flatMap((e) => (e.kind === 'create' && e.answer !== 'refused' ? [e.txid] : [])))];
  const details: VerifySpendersReport = { checked: 0, lost: [], markedConflicting: [] };
  for (let i = 0; i < created.length; i += 1000) {
    const part = await store.verifySpenders(created.slice(i, i + 1000));
    details.checked += part.checked;
    details.lost.push(...part.lost);
    details.markedConflicting.push(...part.markedConflicting);
  }
  return {
    checked: details.checked,
    found: new Set(details.lost.filter((l) => l.state === 'spent-by-other').map((l) => `${l.txid}:${l.vout}`)).size,
    unspent: details.lost.filter((l) => l.state === 'unspent').length,
    marked: details.markedConflicting.length,
    details,
  };
}
