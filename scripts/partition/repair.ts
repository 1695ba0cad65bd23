/**
 * The detection and repair pass of the experiment: every spend the history shows acknowledged is verified against
 * the records with the store's verifyAcknowledgedSpends (lib/store/verify-spends.ts), which marks the loser of each
 * double-acknowledged output and its descendants conflicting.
 */
import { verifyAcknowledgedSpends, type VerifySpendsReport } from '../../lib/store/verify-spends';
import type { UtxoStore } from '../../lib/store/types';
import { acknowledgedSpends } from './checker';
import type { HistoryEvent } from './history';

export interface RepairReport {
  checked: number;
  /** double-acknowledged outputs the pass found */
  found: number;
  /** txs marked conflicting (losers and descendants) */
  marked: number;
  unspent: number;
  unreadable: number;
  details: VerifySpendsReport;
}

export async function repairDoubleAcknowledged(store: UtxoStore, history: HistoryEvent[]): Promise<RepairReport> {
  const spends = acknowledgedSpends(history).map((a) => {
    const [txid, vout] = a.outpoint.split(':');
    return { txid, vout: Number(vout), spendingTxid: a.spender };
  });
  const details = await verifyAcknowledgedSpends(store, spends);
  return {
    checked: details.checked,
    found: details.doubleAcknowledged.length,
    marked: details.markedConflicting.length,
    unspent: details.unspent.length,
    unreadable: details.unreadable.length,
    details,
  };
}
