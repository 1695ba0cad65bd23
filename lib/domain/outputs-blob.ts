/**
 * The `.outputs` blob of a tx without inputs (docs/records.md):
 *   txid (32) || uint32 LE (height << 1 | coinbase) || uint32 LE count ||
 *   per stored output: index uint32 LE, satoshis uint64 LE, script length uint32 LE, script
 */
export interface OutputsBlobOutput {
  index: number;
  satoshis: number;
  lockingScript: Buffer;
}

export interface OutputsBlob {
  /** internal order */
  txid: Buffer;
  height: number;
  isCoinbase: boolean;
  outputs: OutputsBlobOutput[];
}

export function encodeOutputsBlob(blob: OutputsBlob): Buffer {
  // one buffer written in place (a tx above B outputs has thousands: no buffer, BigInt or part per output)
  let size = 40;
  for (const o of blob.outputs) size += 16 + o.lockingScript.length;
  const out = Buffer.alloc(size);
  blob.txid.copy(out, 0);
  out.writeUInt32LE(((blob.height << 1) | (blob.isCoinbase ? 1 : 0)) >>> 0, 32);
  out.writeUInt32LE(blob.outputs.length, 36);
  let at = 40;
  for (const o of blob.outputs) {
    out.writeUInt32LE(o.index, at);
    if (Number.isSafeInteger(o.satoshis) && o.satoshis >= 0) {
      out.writeUInt32LE(o.satoshis % 0x100000000, at + 4);
      out.writeUInt32LE(Math.floor(o.satoshis / 0x100000000), at + 8);
    } else {
      out.writeBigUInt64LE(BigInt(o.satoshis), at + 4);
    }
    out.writeUInt32LE(o.lockingScript.length, at + 12);
    at += 16 + o.lockingScript.copy(out, at + 16);
  }
  return out;
}

export function decodeOutputsBlob(data: Buffer): OutputsBlob {
  const fail = (what: string): never => {
    throw new RangeError(`malformed .outputs blob: ${what}`);
  };
  if (data.length < 40) fail('shorter than its header');
  const txid = Buffer.from(data.subarray(0, 32));
  const hc = data.readUInt32LE(32);
  const count = data.readUInt32LE(36);
  let pos = 40;
  const outputs: OutputsBlobOutput[] = [];
  for (let i = 0; i < count; i++) {
    if (pos + 16 > data.length) fail(`output ${i} truncated`);
    const index = data.readUInt32LE(pos);
    const satoshis = Number(data.readBigUInt64LE(pos + 4));
    const len = data.readUInt32LE(pos + 12);
    pos += 16;
    if (pos + len > data.length) fail(`output ${i} script truncated`);
    outputs.push({ index, satoshis, lockingScript: Buffer.from(data.subarray(pos, pos + len)) });
    pos += len;
  }
  if (pos !== data.length) fail(`${data.length - pos} trailing bytes`);
  return { txid, height: hc >>> 1, isCoinbase: (hc & 1) === 1, outputs };
}
