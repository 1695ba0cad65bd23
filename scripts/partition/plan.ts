/**
 * The workload plan of one run: parent txs (created by the controller before the fault), and for every output of
 * them `spenders` competing spending txs, each assigned to a different client process, due at the same moment (so
 * they race), half of the outputs sent through spendMany batches and half through single spends. Built with
 * @bsv/sdk: real EF transactions, so the store validates them as it would a validator's.
 */
import { Script, Transaction } from '@bsv/sdk';

export interface PlannedSpend {
  /** EF hex */
  hex: string;
  txid: string;
  parent: string;
  vout: number;
  client: number;
  mode: 'single' | 'batch';
  /** ms after the workload starts */
  dueMs: number;
  /** which of the output's competing spenders (0: the first) */
  spender: number;
}

export interface Plan {
  parents: { txid: string; hex: string }[];
  spends: PlannedSpend[];
  outputs: number;
}

export interface PlanOptions {
  outputs: number;
  outputsPerParent: number;
  spenders: number;
  clients: number;
  /** spends are due evenly between fromMs and toMs */
  fromMs: number;
  toMs: number;
  /** distinguishes the txs of this run from every other run's */
  seed: number;
}

const TRUE_SCRIPT = Script.fromHex('51');

export function buildPlan(o: PlanOptions): Plan {
  if (o.spenders < 2 || o.spenders > o.clients) throw new Error('spenders must be from 2 to the number of clients');
  const parentTxs: Transaction[] = [];
  for (let p = 0; p * o.outputsPerParent < o.outputs; p++) {
    const tx = new Transaction();
    tx.version = 1;
    tx.lockTime = (o.seed % 100_000) * 10_000 + p;
    const n = Math.min(o.outputsPerParent, o.outputs - p * o.outputsPerParent);
    for (let v = 0; v < n; v++) tx.addOutput({ lockingScript: TRUE_SCRIPT, satoshis: 10_000 + v });
    parentTxs.push(tx);
  }
  const spends: PlannedSpend[] = [];
  for (let o2 = 0; o2 < o.outputs; o2++) {
    const parent = parentTxs[Math.floor(o2 / o.outputsPerParent)];
    const vout = o2 % o.outputsPerParent;
    const dueMs = Math.round(o.fromMs + ((o.toMs - o.fromMs) * o2) / o.outputs);
    for (let s = 0; s < o.spenders; s++) {
      const tx = new Transaction();
      tx.version = 1;
      tx.lockTime = s + 1;
      tx.addInput({ sourceTransaction: parent, sourceOutputIndex: vout, unlockingScript: new Script(), sequence: 1 });
      // a different amount per spender: a different txid
      tx.addOutput({ lockingScript: TRUE_SCRIPT, satoshis: 9_000 - s });
      spends.push({
        hex: tx.toHexEF(),
        txid: tx.id('hex'),
        parent: parent.id('hex'),
        vout,
        client: (o2 + s) % o.clients,
        mode: o2 % 2 === 0 ? 'batch' : 'single',
        dueMs,
        spender: s,
      });
    }
  }
  return { parents: parentTxs.map((t) => ({ txid: t.id('hex'), hex: t.toHex() })), spends, outputs: o.outputs };
}

/**
 * The plan of a nemesis with late clients (nemesis.ts LATE_CLIENTS): the first spender of every output goes to the
 * early half of the clients, due between `firstFromMs` and `firstToMs`; the rivals to the late half, due between
 * `rivalsFromMs` and `rivalsToMs`. Clients 0 .. clients/2 - 1 are early.
 */
export function withLateRivals(
  plan: Plan,
  clients: number,
  o: { firstFromMs: number; firstToMs: number; rivalsFromMs: number; rivalsToMs: number },
): Plan {
  const early = Math.max(1, Math.floor(clients / 2));
  const late = clients - early;
  if (late < 1) throw new Error('late clients need at least 2 clients');
  const due = (from: number, to: number, k: number) => Math.round(from + ((to - from) * k) / plan.outputs);
  const spends = plan.spends.map((s, i): PlannedSpend => {
    const output = Math.floor(i / (plan.spends.length / plan.outputs));
    return s.spender === 0
      ? { ...s, client: output % early, dueMs: due(o.firstFromMs, o.firstToMs, output) }
      : { ...s, client: early + ((output + s.spender) % late), dueMs: due(o.rivalsFromMs, o.rivalsToMs, output) };
  });
  return { ...plan, spends };
}
