/**
 * previousOutputs (Teranode's PreviousOutputsDecorate): the satoshis and locking script of each outpoint, so a caller
 * can extend a raw tx to EF. Read from the master's `outputs` bin, or from the blob of an external tx (`.tx`, else
 * `.outputs`); the masters of all outpoints in one chunked engine batch, each external tx's blob once.
 */
import type { EngineRecord } from '../engine/port';
import { BIN } from '../domain/bins';
import { InvalidArgumentError, StorageError, TxNotFoundError, UtxoStateError } from '../domain/errors';
import { masterKey } from '../domain/keys';
import { decodeOutputsBlob } from '../domain/outputs-blob';
import { parseOutput, parseTx, type ParsedOutput } from '../domain/tx';
import { txidToHex } from '../domain/txid';
import { intArg, listArg, txidArg } from './args';
import { asItemError, inChunks, type ItemResult } from './batch';
import type { StoreContext } from './context';
import type { PreviousOutput } from './types';
import { storageError } from './udf-call';

export interface Outpoint {
  txid: string;
  vout: number;
}

/** The outputs of one tx by vout (undefined: not stored or beyond the tx), or why they could not be read. */
type OutputsOf = (vout: number) => ParsedOutput | undefined;

export async function previousOutputs(ctx: StoreContext, value: Outpoint[]): Promise<ItemResult<PreviousOutput>[]> {
  const refs = listArg<Outpoint>(value, 'outpoints').map((o) => {
    try {
      if (o === null || typeof o !== 'object') throw new InvalidArgumentError('outpoint', 'expected {txid, vout}');
      const bytes = txidArg(o.txid, 'txid');
      return { bytes, hex: txidToHex(bytes), vout: intArg(o.vout, 'vout') };
    } catch (err) {
      return asItemError(err);
    }
  });
  const txids = new Map<string, Buffer>();
  for (const r of refs) if (!(r instanceof Error)) txids.set(r.hex, r.bytes);
  const outputs = await outputsOfMany(ctx, txids);
  return refs.map((r): ItemResult<PreviousOutput> => {
    if (r instanceof Error) return { ok: false, error: r };
    const of = outputs.get(r.hex)!;
    if (of instanceof Error) return { ok: false, error: asItemError(of) };
    const out = of(r.vout);
    if (!out) {
      const message = `output ${r.vout} of ${r.hex} does not exist`;
      return { ok: false, error: new UtxoStateError('UTXO_NOT_FOUND', message, { txid: r.hex, vout: r.vout }) };
    }
    return {
      ok: true,
      value: { txid: r.hex, vout: r.vout, satoshis: out.satoshis, lockingScript: out.lockingScript.toString('hex') },
    };
  });
}

async function outputsOfMany(ctx: StoreContext, txids: Map<string, Buffer>): Promise<Map<string, OutputsOf | Error>> {
  const out = new Map<string, OutputsOf | Error>();
  let masters: (EngineRecord | null)[];
  try {
    masters = await inChunks(ctx, [...txids.values()], (part) =>
      ctx.engine.batchGet(
        part.map((t) => masterKey(t)),
        [BIN.external, BIN.outputs],
      ),
    );
  } catch (err) {
    const error = storageError('reading the records failed', err);
    for (const hex of txids.keys()) out.set(hex, error);
    return out;
  }
  await Promise.all(
    [...txids.keys()].map(async (hex, i) => {
      const master = masters[i];
      if (!master) return void out.set(hex, new TxNotFoundError(hex));
      if (!master.bins[BIN.external]) {
        const list = (master.bins[BIN.outputs] as Buffer[] | undefined) ?? [];
        return void out.set(hex, (vout) => (Buffer.isBuffer(list[vout]) ? parseOutput(list[vout]) : undefined));
      }
      out.set(hex, await outputsFromBlob(ctx, hex).catch((err: Error) => err));
    }),
  );
  return out;
}

async function outputsFromBlob(ctx: StoreContext, hex: string): Promise<OutputsOf> {
  let tx, outputs;
  try {
    tx = await ctx.blobs.get(hex, 'tx');
    if (!tx) outputs = await ctx.blobs.get(hex, 'outputs');
  } catch (err) {
    throw storageError('reading the transaction blob failed', err, { txid: hex });
  }
  if (tx) {
    const parsed = parseTx(tx, 'blob').outputs;
    return (vout) => parsed[vout];
  }
  if (outputs) {
    const byIndex = new Map(decodeOutputsBlob(outputs).outputs.map((o) => [o.index, o]));
    return (vout) => byIndex.get(vout);
  }
  throw new StorageError(`the blob of external transaction ${hex} is missing`, { txid: hex });
}
