/**
 * The drill's history: the partition harness's events (scripts/partition/history.ts: every request, its answer, when
 * it was sent and answered, in ms since the drill started) with what a replay needs to send them again: the tx of a
 * create or a spend, the height of a mined block. Lines are appended as the answers arrive, so the file's order is the
 * order in which the store acknowledged them (one load process; the controller's seed creates come first).
 *
 * An answer `ok` with code TX_EXISTS is a create whose earlier attempt was in doubt and had been applied: the caller
 * knows the tx is stored, as after any acknowledgement.
 */
import type { CreateEvent, MinedEvent, SpendEvent } from '../partition/history';
import { parseHistory } from '../partition/history';

export type DrillCreate = CreateEvent & { hex: string };
export type DrillSpend = SpendEvent & { hex: string };
export type DrillMined = MinedEvent & { blockHeight: number };
export type DrillEvent = DrillCreate | DrillSpend | DrillMined;

export function parseDrillHistory(jsonl: string): DrillEvent[] {
  const events = parseHistory(jsonl) as DrillEvent[];
  events.forEach((e, i) => {
    const ok = e.kind === 'setMined' ? Number.isInteger(e.blockHeight) : typeof e.hex === 'string';
    if (!ok)
      throw new Error(
        `drill history line ${i + 1}: a ${e.kind} without ${e.kind === 'setMined' ? 'blockHeight' : 'hex'}`,
      );
  });
  return events;
}

/** The acknowledged events (answer ok), in acknowledgement order. */
export const acknowledged = (events: DrillEvent[]): DrillEvent[] => events.filter((e) => e.answer === 'ok');
