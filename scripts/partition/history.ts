/**
 * The history of a partition run: every request a client sent to the store and the answer it got, one JSON object
 * per line (JSONL), plus the final records read after the cluster healed and migrations finished.
 *
 * An answer is one of:
 *  - ok: the store acknowledged it (what a caller would act on);
 *  - refused: the store answered a definite no (SPENT, TX_EXISTS, ... : nothing was applied);
 *  - in-doubt: an error or a timeout (STORAGE_ERROR, a thrown error): it may or may not have been applied.
 */

import { UtxoStoreError } from '../../lib/domain/errors';

export type Answer = 'ok' | 'refused' | 'in-doubt';

/** What a history event records of a call's answer. */
export type Answered = Pick<EventBase, 'answer' | 'code' | 'reason'>;

/**
 * The answer a store error stands for: STORAGE_ERROR is in doubt (sent again), any other code a refusal; an error the
 * store did not type is in doubt. A spend the acknowledgement guard refused carries its class (details.ackRefusal).
 */
export function answerOf(err: unknown): Answered {
  if (err instanceof UtxoStoreError) {
    const reason = err.details.ackRefusal;
    return {
      answer: err.code === 'STORAGE_ERROR' ? 'in-doubt' : 'refused',
      code: err.code,
      ...(typeof reason === 'string' ? { reason } : {}),
    };
  }
  return { answer: 'in-doubt', code: err instanceof Error ? `THROWN ${err.message.slice(0, 80)}` : 'THROWN' };
}

export interface Outpoint {
  txid: string;
  vout: number;
}

interface EventBase {
  /** the client process (one aerospike client each, like one Lambda execution environment) */
  client: string;
  /** one store call carrying one item, or a batched call (spendMany / createMany) */
  mode: 'single' | 'batch';
  /** ms since the run started, when the call was sent and when it answered */
  start: number;
  end: number;
  answer: Answer;
  /** the store's error code (SPENT, STORAGE_ERROR, ...) of a refused or in-doubt answer */
  code?: string;
  /** an in-doubt spend refused by the acknowledgement guard: its class (unfenced, changed, ...: lib/store/ack-guard.ts) */
  reason?: string;
  /** what the nemesis was doing when the call was sent (e.g. "before", "fault", "healed") */
  phase?: string;
}

/** One spending tx sent to the store's spend. All-or-nothing: its answer covers every input. */
export interface SpendEvent extends EventBase {
  kind: 'spend';
  spender: string;
  inputs: Outpoint[];
}

export interface CreateEvent extends EventBase {
  kind: 'create';
  txid: string;
}

export interface MinedEvent extends EventBase {
  kind: 'setMined';
  txids: string[];
  blockId: number;
}

export type HistoryEvent = SpendEvent | CreateEvent | MinedEvent;

/** What the records say once the cluster is whole and migrations are done (read through the store). */
export interface FinalState {
  /**
   * outpoint key (`txid:vout`) -> the spender in the record, null when the output is unspent. An outpoint absent
   * from the map could not be read (its record is missing).
   */
  spenders: Record<string, string | null>;
  /** txid -> its record; absent: the tx is not in the store */
  txs: Record<string, { blockIds: number[]; conflicting: boolean }>;
}

export const outpointKey = (o: Outpoint): string => `${o.txid}:${o.vout}`;

export function parseHistory(jsonl: string): HistoryEvent[] {
  return jsonl
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      const event = JSON.parse(line) as HistoryEvent;
      if (!['spend', 'create', 'setMined'].includes(event.kind)) throw new Error(`history line ${i + 1}: bad kind`);
      return event;
    });
}
