/**
 * getSpend (docs/operations.md): the spendability of outputs at H + 1, as a spend would see it. Many outputs read as
 * one chunked engine batch (their masters and pagination records) and one tip read; each output answers on its own.
 */
import type { BinValue, EngineRecord } from '../engine/port';
import { BIN } from '../domain/bins';
import { InvalidArgumentError } from '../domain/errors';
import { locateOutput, masterKey, recordKey } from '../domain/keys';
import { decodeSlot } from '../domain/slots';
import { txidToHex } from '../domain/txid';
import { hashArg, intArg, listArg, txidArg } from './args';
import { asItemError, inChunks, unwrap, type ItemResult } from './batch';
import type { StoreContext } from './context';
import { spenderOf } from './spend-items';
import type { SpendStatus } from './types';
import { storageError } from './udf-call';

export interface UtxoRef {
  txid: string;
  vout: number;
  utxoHash?: string;
}

interface Resolved {
  txidHex: string;
  vout: number;
  expected?: Buffer;
  offset: number;
  /** keys of the master and (for a page) of the output's record */
  keys: Buffer[];
}

const FLAGS = [BIN.creating, BIN.conflicting, BIN.locked, BIN.spendingHeight, BIN.deleting];

function toInt(v: BinValue | undefined): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

function resolve(ref: UtxoRef, B: number): Resolved {
  if (ref === null || typeof ref !== 'object') throw new InvalidArgumentError('ref', 'expected an object');
  const txid = txidArg(ref.txid, 'txid');
  const vout = intArg(ref.vout, 'vout');
  const expected = ref.utxoHash === undefined ? undefined : hashArg(ref.utxoHash, 'utxoHash');
  const { recordNumber, offset } = locateOutput(vout, B);
  const keys = [masterKey(txid)];
  if (recordNumber > 0) keys.push(recordKey(txid, recordNumber));
  return { txidHex: txidToHex(txid), vout, expected, offset, keys };
}

export async function getSpendMany(ctx: StoreContext, refsValue: UtxoRef[]): Promise<ItemResult<SpendStatus>[]> {
  const refs = listArg<UtxoRef>(refsValue, 'utxos').map((ref) => {
    try {
      return resolve(ref, ctx.settings.utxoBatchSize);
    } catch (err) {
      return asItemError(err);
    }
  });
  const valid = refs.filter((r): r is Resolved => !(r instanceof Error));
  const keyIndex = new Map<string, number>();
  const keys: Buffer[] = [];
  for (const r of valid)
    for (const k of r.keys) {
      const id = k.toString('hex');
      if (!keyIndex.has(id)) {
        keyIndex.set(id, keys.length);
        keys.push(k);
      }
    }
  let records: (EngineRecord | null)[];
  try {
    records = await inChunks(ctx, keys, (part) =>
      ctx.engine.batchGet(part, [...FLAGS, BIN.utxos, BIN.utxoSpendableIn]),
    );
  } catch (err) {
    return refs.map((r) => ({
      ok: false,
      error: r instanceof Error ? r : storageError('reading the record failed', err, { txid: r.txidHex, vout: r.vout }),
    }));
  }
  const recordOf = (k: Buffer) => records[keyIndex.get(k.toString('hex'))!];
  let tip: Promise<number> | undefined;
  const height = () => (tip ??= ctx.tip()).then((h) => h + 1);
  return Promise.all(
    refs.map(async (r): Promise<ItemResult<SpendStatus>> => {
      if (r instanceof Error) return { ok: false, error: r };
      try {
        return { ok: true, value: await statusOf(r, recordOf(r.keys[0]), recordOf(r.keys[r.keys.length - 1]), height) };
      } catch (err) {
        return { ok: false, error: asItemError(err) };
      }
    }),
  );
}

export async function getSpend(ctx: StoreContext, ref: UtxoRef): Promise<SpendStatus> {
  const [result] = await getSpendMany(ctx, [ref]);
  return unwrap(result);
}

async function statusOf(
  r: Resolved,
  master: EngineRecord | null,
  record: EngineRecord | null,
  heightNow: () => Promise<number>,
): Promise<SpendStatus> {
  if (!master || !record) return { status: 'NOT_FOUND' };
  const slot = ((record.bins[BIN.utxos] as BinValue[] | undefined) ?? [])[r.offset];
  if (!Buffer.isBuffer(slot)) return { status: 'NOT_FOUND' };
  const decoded = decodeSlot(slot);
  if (decoded.state === 'none') return { status: 'NOT_FOUND' };
  if (r.expected && !slot.subarray(0, 32).equals(r.expected)) return { status: 'NOT_FOUND' };
  if (decoded.state === 'spent') return { status: 'SPENT', ...spenderOf(slot.subarray(32, 68)) };
  if (decoded.state === 'frozen') return { status: 'FROZEN' };

  const height = await heightNow();
  const spendingHeight = toInt(master.bins[BIN.spendingHeight]);
  const spendableIn = (record.bins[BIN.utxoSpendableIn] ?? {}) as Record<string, BinValue>;
  const reassignedAt = toInt(spendableIn[String(r.offset)]);
  const spendableAt = Math.max(spendingHeight ?? 0, reassignedAt ?? 0) || undefined;
  const withAt = (s: SpendStatus): SpendStatus => (spendableAt !== undefined ? { ...s, spendableAt } : s);
  if (master.bins[BIN.creating] || record.bins[BIN.creating]) return withAt({ status: 'CREATING' });
  if (master.bins[BIN.deleting]) return { status: 'NOT_FOUND' };
  if (master.bins[BIN.conflicting]) return withAt({ status: 'CONFLICTING' });
  if (master.bins[BIN.locked]) return withAt({ status: 'LOCKED' });
  if (spendingHeight !== undefined && spendingHeight > height) return withAt({ status: 'IMMATURE' });
  if (reassignedAt !== undefined && reassignedAt > height) return withAt({ status: 'FROZEN' });
  return withAt({ status: 'OK' });
}
