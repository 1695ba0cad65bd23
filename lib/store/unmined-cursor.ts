/**
 * Cursors of the unmined query. The engine's paging state is large on Aerospike (the saved query covers all 4096
 * partitions: tens of kilobytes), too large for a URL query parameter or API Gateway's 10 KB request line. The store
 * keeps it in a cursor record with a TTL and hands out the record's 16-byte id as 32 hex characters. A cursor is
 * tied to its query's cutoff and can be read again until it expires (a retried request gets the same page).
 */
import { randomBytes } from 'crypto';
import { InvalidArgumentError } from '../domain/errors';
import { unminedCursorKey } from '../domain/keys';
import type { StoreContext } from './context';
import { storageError } from './udf-call';

/** Seconds a cursor stays valid. */
export const UNMINED_CURSOR_TTL_SECONDS = 3600;

/** The engine's paging state behind a cursor handed out for the same cutoff. */
export async function resolveUnminedCursor(ctx: StoreContext, cursor: string, cutoff: number): Promise<string> {
  if (!/^[0-9a-f]{32}$/.test(cursor)) {
    throw new InvalidArgumentError('cursor', 'expected the cursor of the previous page (32 hex characters)');
  }
  let record;
  try {
    record = await ctx.engine.get(unminedCursorKey(Buffer.from(cursor, 'hex')));
  } catch (err) {
    throw storageError('reading the unmined cursor failed', err);
  }
  const state = record?.bins.engineCursor;
  if (!record || typeof state !== 'string') {
    throw new InvalidArgumentError(
      'cursor',
      `not a cursor returned by a previous page, or expired (cursors live ${UNMINED_CURSOR_TTL_SECONDS} s)`,
    );
  }
  if (record.bins.cutoff !== cutoff) {
    throw new InvalidArgumentError(
      'cursor',
      `this cursor belongs to a query with cutoff ${String(record.bins.cutoff)}`,
    );
  }
  return state;
}

/** Stores the engine's paging state; answers the cursor for the next page. */
export async function saveUnminedCursor(ctx: StoreContext, engineCursor: string, cutoff: number): Promise<string> {
  const id = randomBytes(16);
  try {
    await ctx.engine.create(unminedCursorKey(id), { engineCursor, cutoff }, { ttl: UNMINED_CURSOR_TTL_SECONDS });
  } catch (err) {
    throw storageError('saving the unmined cursor failed', err);
  }
  return id.toString('hex');
}
