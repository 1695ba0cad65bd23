/**
 * Record reads shared by the operations, each one engine batch read (in chunks) whatever the number of txids:
 * masters of txids (their `deleting` flag), the txids still being created, and which txids are stored.
 */
import type { EngineRecord } from '../engine/port';
import { BIN } from '../domain/bins';
import { masterKey } from '../domain/keys';
import { inChunks } from './batch';
import type { StoreContext } from './context';
import { storageError } from './udf-call';

/** Master records by txid bytes (hex key -> record or null), reading only `bins`. */
async function mastersOf(
  ctx: StoreContext,
  txids: Buffer[],
  bins: string[],
  what: string,
): Promise<(EngineRecord | null)[]> {
  try {
    return await inChunks(ctx, txids, (part) =>
      ctx.engine.batchGet(
        part.map((t) => masterKey(t)),
        bins,
      ),
    );
  } catch (err) {
    throw storageError(`reading ${what} failed`, err);
  }
}

/**
 * The masters of the given txids (only their `deleting` bin; null when absent): a TX_NOT_FOUND from a pagination
 * record of a tx whose master exists means the output lies beyond the tx's last record (UTXO_NOT_FOUND).
 */
export function readMasters(ctx: StoreContext, txids: Buffer[]): Promise<(EngineRecord | null)[]> {
  return mastersOf(ctx, txids, [BIN.deleting], 'the master records');
}

function unique(txids: Map<string, Buffer> | Buffer[]): Map<string, Buffer> {
  if (txids instanceof Map) return txids;
  return new Map(txids.map((t) => [t.toString('hex'), t]));
}

/** Of the given txids (key -> bytes), those whose master is still `creating` (its create has not committed). */
export async function txidsCreating(ctx: StoreContext, txids: Map<string, Buffer>): Promise<Set<string>> {
  const creating = new Set<string>();
  if (txids.size === 0) return creating;
  const masters = await mastersOf(ctx, [...txids.values()], [BIN.creating], 'the masters of the spent records');
  [...txids.keys()].forEach((k, n) => {
    if (masters[n]?.bins[BIN.creating]) creating.add(k);
  });
  return creating;
}

/** Of the given txids, those that are stored (a master exists); keys as given. */
export async function txidsStored(ctx: StoreContext, txids: Map<string, Buffer> | Buffer[]): Promise<Set<string>> {
  const map = unique(txids);
  const stored = new Set<string>();
  if (map.size === 0) return stored;
  const masters = await mastersOf(ctx, [...map.values()], [BIN.txID], 'the transactions');
  [...map.keys()].forEach((k, n) => {
    if (masters[n] !== null) stored.add(k);
  });
  return stored;
}

/** Of the given txids, those whose master exists and is not being deleted (cleanup removes pages first). */
export async function txidsStanding(ctx: StoreContext, txids: Map<string, Buffer>): Promise<Set<string>> {
  const standing = new Set<string>();
  if (txids.size === 0) return standing;
  const masters = await readMasters(ctx, [...txids.values()]);
  [...txids.keys()].forEach((k, n) => {
    const m = masters[n];
    if (m !== null && !m.bins[BIN.deleting]) standing.add(k);
  });
  return standing;
}
