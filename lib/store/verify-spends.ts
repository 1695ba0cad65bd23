/**
 * Detection and repair of double-acknowledged outputs (docs/decisions/0006-partitions-on-community-edition.md).
 *
 * On Aerospike Community Edition (AP mode) a network partition can let a spend of an output be acknowledged and then
 * lost when the cluster heals (the records' conflict resolution keeps the other side's version of the parent record),
 * while another spender of the same output is acknowledged too. A validator stores each tx after its spends were
 * acknowledged, so the stored txs are the journal of acknowledged spends: `verifySpenders(txids)` reads each tx's
 * inputs and the parent outputs they spend, and finds every input whose output the record shows spent by another tx
 * (or unspent). With `repair` (the default), each such tx (a loser: its acknowledged spend did not stand) and all its
 * descendants are marked conflicting (setConflicting: every record of each tx, with the signals that sends), the way
 * Teranode resolves a double spend: the spender in the record stands (every reader has seen it since the heal).
 *
 * Idempotent: a second run finds the same losers and marks nothing new.
 */
import { setConflicting } from './admin';
import { txidListArg } from './args';
import type { StoreContext } from './context';
import { descendantsOf, loadTxs, readInputSlots, type TxInput } from './tx-graph';
import type { VerifySpendersReport } from './types';

const CHUNK = 500;

export async function verifySpenders(
  ctx: StoreContext,
  txidsValue: unknown,
  options: { repair?: boolean } = {},
): Promise<VerifySpendersReport> {
  const refs = txidListArg(txidsValue, 'txids');
  const report: VerifySpendersReport = { checked: 0, lost: [], markedConflicting: [] };
  const losers = new Map<string, (typeof refs)[number]>();
  for (let i = 0; i < refs.length; i += CHUNK) {
    const txs = (await loadTxs(ctx, refs.slice(i, i + CHUNK))).filter((t) => t !== null);
    report.checked += txs.length;
    const inputs: { tx: (typeof txs)[number]; input: TxInput }[] = txs.flatMap((tx) =>
      tx.conflicting ? [] : tx.inputs.map((input) => ({ tx, input })),
    );
    const slots = await readInputSlots(
      ctx,
      inputs.map((x) => x.input),
    );
    slots.forEach((slot, k) => {
      const { tx, input } = inputs[k];
      if (slot.state === 'spent' && slot.spender.hex === tx.ref.hex) return;
      report.lost.push({
        txid: input.parent.hex,
        vout: input.vout,
        spendingTxid: tx.ref.hex,
        vin: input.vin,
        recorded: slot.state === 'spent' ? slot.spender.hex : undefined,
        state: slot.state === 'spent' ? 'spent-by-other' : slot.state,
      });
      if (slot.state === 'spent') losers.set(tx.ref.hex, tx.ref);
    });
  }
  if (options.repair === false || losers.size === 0) return report;
  const roots = [...losers.values()];
  const marked = [...roots, ...(await descendantsOf(ctx, roots, new Set()))].map((r) => r.hex);
  for (let i = 0; i < marked.length; i += CHUNK) await setConflicting(ctx, marked.slice(i, i + CHUNK), true);
  report.markedConflicting = marked;
  return report;
}
