/**
 * The checker: a pure function of a history and the final records (history.ts). It compares every acknowledged
 * answer with what the records say once the cluster healed and migrations finished:
 *  - no output acknowledged to two different spenders (double-acknowledged);
 *  - no acknowledged spend missing from the record (lost: the record names another spender, or none);
 *  - no acknowledged create missing, no acknowledged setMined missing its block;
 *  - every in-doubt answer resolved one way or the other (applied: the record names that spender; not applied: it
 *    does not), unresolved only when the record could not be read;
 *  - no recorded spender that no client ever sent (phantom).
 * A double-acknowledged output counts as repaired when every acknowledged spender the record does not name (the
 * losers) is in the store and marked conflicting there (detection and repair, scripts/partition/repair.ts): a
 * loser that was never created cannot be marked, and stays unrepaired.
 */
import { outpointKey, type FinalState, type HistoryEvent, type MinedEvent, type SpendEvent } from './history';

export interface DoubleAcknowledged {
  outpoint: string;
  /** the distinct spenders some client got an ok for */
  acknowledged: string[];
  /** the spender in the final record (null: unspent; undefined: unreadable) */
  recorded: string | null | undefined;
  /** acknowledged spenders the record does not name */
  losers: string[];
  repaired: boolean;
  /** every event touching the output, in start order: the anomalous history */
  events: SpendEvent[];
}

export interface LostSpend {
  outpoint: string;
  spender: string;
  recorded: string | null | undefined;
  /** the loser of a double-acknowledged output (else: lost without a second acknowledgement) */
  doubleAcknowledged: boolean;
  repaired: boolean;
}

export interface CheckReport {
  spends: { sent: number; acknowledged: number; refused: number; inDoubt: number };
  inDoubt: { applied: number; notApplied: number; partial: number; unresolved: number };
  contestedOutputs: number;
  doubleAcknowledged: DoubleAcknowledged[];
  lostSpends: LostSpend[];
  creates: { sent: number; acknowledged: number; lost: string[] };
  mined: { acknowledged: number; lost: { txid: string; blockId: number }[] };
  /** outputs whose record names a spender no client sent */
  phantoms: { outpoint: string; recorded: string }[];
  /** true when nothing above is an anomaly left unrepaired */
  ok: boolean;
}

function isRepairedLoser(final: FinalState, txid: string): boolean {
  return final.txs[txid]?.conflicting === true;
}

export function checkHistory(history: HistoryEvent[], final: FinalState): CheckReport {
  const spends = history.filter((e): e is SpendEvent => e.kind === 'spend').sort((a, b) => a.start - b.start);
  const byOutpoint = new Map<string, SpendEvent[]>();
  const sentSpenders = new Map<string, Set<string>>();
  for (const e of spends) {
    for (const input of e.inputs) {
      const key = outpointKey(input);
      if (!byOutpoint.has(key)) byOutpoint.set(key, []);
      byOutpoint.get(key)!.push(e);
      if (!sentSpenders.has(key)) sentSpenders.set(key, new Set());
      sentSpenders.get(key)!.add(e.spender);
    }
  }

  const count = (answer: string) => spends.filter((e) => e.answer === answer).length;
  const inDoubt = { applied: 0, notApplied: 0, partial: 0, unresolved: 0 };
  for (const e of spends) {
    if (e.answer !== 'in-doubt') continue;
    const recorded = e.inputs.map((i) => final.spenders[outpointKey(i)]);
    if (recorded.some((r) => r === undefined)) inDoubt.unresolved++;
    else if (recorded.every((r) => r === e.spender)) inDoubt.applied++;
    else if (recorded.every((r) => r !== e.spender)) inDoubt.notApplied++;
    else inDoubt.partial++;
  }

  const doubleAcknowledged: DoubleAcknowledged[] = [];
  const lostSpends: LostSpend[] = [];
  const phantoms: { outpoint: string; recorded: string }[] = [];
  let contestedOutputs = 0;
  for (const [outpoint, events] of byOutpoint) {
    if (sentSpenders.get(outpoint)!.size > 1) contestedOutputs++;
    const recorded = final.spenders[outpoint];
    if (typeof recorded === 'string' && !sentSpenders.get(outpoint)!.has(recorded))
      phantoms.push({ outpoint, recorded });
    const acknowledged = [...new Set(events.filter((e) => e.answer === 'ok').map((e) => e.spender))];
    const losers = acknowledged.filter((s) => s !== recorded);
    const double = acknowledged.length > 1;
    for (const spender of losers) {
      lostSpends.push({
        outpoint,
        spender,
        recorded,
        doubleAcknowledged: double,
        repaired: double && recorded !== undefined && recorded !== null && isRepairedLoser(final, spender),
      });
    }
    if (double) {
      doubleAcknowledged.push({
        outpoint,
        acknowledged,
        recorded,
        losers,
        repaired:
          typeof recorded === 'string' &&
          acknowledged.includes(recorded) &&
          losers.every((l) => isRepairedLoser(final, l)),
        events,
      });
    }
  }

  const creates = history.filter((e) => e.kind === 'create');
  const ackedCreates = new Set(creates.filter((e) => e.answer === 'ok').map((e) => e.txid));
  const lostCreates = [...ackedCreates].filter((txid) => final.txs[txid] === undefined);

  const mined = history.filter((e): e is MinedEvent => e.kind === 'setMined' && e.answer === 'ok');
  const lostMined: { txid: string; blockId: number }[] = [];
  for (const e of mined) {
    for (const txid of e.txids) {
      if (!(final.txs[txid]?.blockIds ?? []).includes(e.blockId)) lostMined.push({ txid, blockId: e.blockId });
    }
  }

  const ok =
    doubleAcknowledged.every((d) => d.repaired) &&
    lostSpends.every((l) => l.repaired) &&
    lostCreates.length === 0 &&
    lostMined.length === 0 &&
    inDoubt.unresolved === 0 &&
    inDoubt.partial === 0 &&
    phantoms.length === 0;

  return {
    spends: { sent: spends.length, acknowledged: count('ok'), refused: count('refused'), inDoubt: count('in-doubt') },
    inDoubt,
    contestedOutputs,
    doubleAcknowledged,
    lostSpends,
    creates: { sent: creates.length, acknowledged: ackedCreates.size, lost: lostCreates },
    mined: { acknowledged: mined.length, lost: lostMined },
    phantoms,
    ok,
  };
}

/** The acknowledged spends a detection pass must verify: every ok spend input (spender, outpoint). */
export function acknowledgedSpends(history: HistoryEvent[]): { outpoint: string; spender: string }[] {
  const seen = new Set<string>();
  const out: { outpoint: string; spender: string }[] = [];
  for (const e of history) {
    if (e.kind !== 'spend' || e.answer !== 'ok') continue;
    for (const input of e.inputs) {
      const key = `${outpointKey(input)}>${e.spender}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ outpoint: outpointKey(input), spender: e.spender });
    }
  }
  return out;
}

/** One line of counts per run, for the report table. */
export function summaryRow(name: string, r: CheckReport): Record<string, string | number> {
  return {
    nemesis: name,
    contested: r.contestedOutputs,
    'spends sent': r.spends.sent,
    acknowledged: r.spends.acknowledged,
    refused: r.spends.refused,
    'in-doubt': r.spends.inDoubt,
    'in-doubt applied/not': `${r.inDoubt.applied}/${r.inDoubt.notApplied}`,
    'double-acked': r.doubleAcknowledged.length,
    'lost acked spends': r.lostSpends.length,
    repaired: r.doubleAcknowledged.filter((d) => d.repaired).length,
    'lost creates': r.creates.lost.length,
    'lost mined': r.mined.lost.length,
    ok: r.ok ? 'yes' : 'NO',
  };
}
