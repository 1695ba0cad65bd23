/**
 * Record keys (docs/records.md), Aerospike user keys as bytes: master = the 32 txid bytes; pagination record
 * n >= 1 = txid || uint32 LE n; lock record = txid || uint32 LE 0xFFFFFFFF. Output `vout` lives in record
 * floor(vout / B) at offset vout mod B.
 */
export const LOCK_RECORD_NUMBER = 0xffffffff;

function withSuffix(txid: Buffer, n: number): Buffer {
  if (txid.length !== 32) throw new RangeError('txid must be 32 bytes');
  // every byte is written below; from Node's pool, as encodeSpendingData (spending-data.ts) says why
  const key = Buffer.allocUnsafe(36);
  txid.copy(key, 0);
  key.writeUInt32LE(n, 32);
  return key;
}

/**
 * The txid's own bytes, not a copy: nothing writes to a key, and a batch's keys live while its records are written
 * (a copy per record was that much more for the garbage collector to move).
 */
export function masterKey(txid: Buffer): Buffer {
  if (txid.length !== 32) throw new RangeError('txid must be 32 bytes');
  return txid;
}

export function paginationKey(txid: Buffer, n: number): Buffer {
  if (!Number.isInteger(n) || n < 1 || n >= LOCK_RECORD_NUMBER) throw new RangeError(`invalid pagination record ${n}`);
  return withSuffix(txid, n);
}

export function lockKey(txid: Buffer): Buffer {
  return withSuffix(txid, LOCK_RECORD_NUMBER);
}

/*
 * Records that belong to no tx (the cleanup range locks, unmined-query and unmined-iteration cursors, double-spend
 * resolution intents): their keys are neither 32 nor 36 bytes long, so they never collide with a master, pagination
 * or lock record, and parseRecordKey answers null.
 */

/** Prefix of the cleanup range locks (lib/cleanup/pass-lock.ts rangeLockKey: `cleanup-pass-lock:<begin>:<count>`). */
export const CLEANUP_PASS_LOCK_KEY = Buffer.from('cleanup-pass-lock', 'ascii');
const UNMINED_CURSOR_PREFIX = Buffer.from('unmined-cursor:', 'ascii');

/** Key of the record holding an unmined-query cursor's paging state (a 16-byte id: 31 bytes). */
export function unminedCursorKey(id: Buffer): Buffer {
  if (id.length !== 16) throw new RangeError('a cursor id is 16 bytes');
  return Buffer.concat([UNMINED_CURSOR_PREFIX, id]);
}

const CONFLICT_INTENT_PREFIX = Buffer.from('pc:', 'ascii');

/** Key of the intent record of a double-spend resolution: 'pc:' || sha256 of the sorted winners (35 bytes). */
export function conflictIntentKey(winnersDigest: Buffer): Buffer {
  if (winnersDigest.length !== 32) throw new RangeError('a winners digest is 32 bytes');
  return Buffer.concat([CONFLICT_INTENT_PREFIX, winnersDigest]);
}

/** Record 0 is the master. */
export function recordKey(txid: Buffer, recordNumber: number): Buffer {
  return recordNumber === 0 ? masterKey(txid) : paginationKey(txid, recordNumber);
}

export type ParsedKey =
  | { kind: 'master'; txid: Buffer; recordNumber: 0 }
  | { kind: 'pagination'; txid: Buffer; recordNumber: number }
  | { kind: 'lock'; txid: Buffer };

export function parseRecordKey(key: Buffer): ParsedKey | null {
  if (key.length === 32) return { kind: 'master', txid: Buffer.from(key), recordNumber: 0 };
  if (key.length !== 36) return null;
  const txid = Buffer.from(key.subarray(0, 32));
  const n = key.readUInt32LE(32);
  if (n === LOCK_RECORD_NUMBER) return { kind: 'lock', txid };
  if (n === 0) return null;
  return { kind: 'pagination', txid, recordNumber: n };
}

export function locateOutput(vout: number, B: number): { recordNumber: number; offset: number } {
  return { recordNumber: Math.floor(vout / B), offset: vout % B };
}

/** Records of a tx with `outputs` outputs (at least the master). */
export function recordCount(outputs: number, B: number): number {
  return Math.max(1, Math.ceil(outputs / B));
}

/** TTL of the lock record of a multi-record create: min(30 + 2 x records, 300) seconds. */
export function lockTtlSeconds(records: number): number {
  return Math.min(30 + 2 * records, 300);
}
