/**
 * Transaction parsing and serialization (docs/records.md): raw and extended format (EF, BIP-239).
 *
 * The parser reads the wire format byte for byte rather than through @bsv/sdk's Transaction: the UTXO hash and the
 * stored inputs/outputs must be the exact script bytes of the tx, and a script library re-encodes scripts from
 * parsed chunks (a non-canonical push would come back different). @bsv/sdk serves as the oracle in the tests.
 */
import { InvalidArgumentError } from './errors';
import { txidOf, txidToHex } from './txid';
import { compactSize } from './utxo-hash';

const EF_MARKER = Buffer.from('0000000000ef', 'hex');
const MAX_SATOSHIS = 21_000_000n * 100_000_000n;

export interface ParsedInput {
  /** internal order */
  prevTxid: Buffer;
  prevTxidHex: string;
  vout: number;
  unlockingScript: Buffer;
  sequence: number;
  /** EF only: the previous output */
  satoshis?: number;
  lockingScript?: Buffer;
}

export interface ParsedOutput {
  satoshis: number;
  lockingScript: Buffer;
}

export interface ParsedTx {
  /** internal order */
  txid: Buffer;
  txidHex: string;
  version: number;
  locktime: number;
  inputs: ParsedInput[];
  outputs: ParsedOutput[];
  isExtended: boolean;
  isCoinbase: boolean;
  /** sum(input satoshis) - sum(output satoshis) for EF; 0 when unknown (raw or coinbase) */
  fee: number;
  /** size of the raw (non-extended) serialization */
  sizeInBytes: number;
  /** size of the EF serialization (= sizeInBytes for raw txs) */
  extendedSize: number;
  raw: Buffer;
  /** the EF bytes, when the tx came in EF */
  ef?: Buffer;
}

class Reader {
  pos = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly field: string,
  ) {}

  private need(n: number, what: string): void {
    if (this.pos + n > this.buf.length) {
      throw new InvalidArgumentError(this.field, `truncated transaction: ${what} at byte ${this.pos}`);
    }
  }
  bytes(n: number, what: string): Buffer {
    this.need(n, what);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  satoshis(what: string): number {
    this.need(8, what);
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    if (v > MAX_SATOSHIS) throw new InvalidArgumentError(this.field, `${what} exceeds 21 million BSV`);
    return Number(v);
  }
  varint(what: string): number {
    this.need(1, what);
    const first = this.buf[this.pos++];
    if (first < 0xfd) return first;
    if (first === 0xfd) {
      this.need(2, what);
      const v = this.buf.readUInt16LE(this.pos);
      this.pos += 2;
      return v;
    }
    if (first === 0xfe) return this.u32(what);
    this.need(8, what);
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    if (v > BigInt(this.buf.length)) throw new InvalidArgumentError(this.field, `${what} is larger than the tx`);
    return Number(v);
  }
  script(what: string): Buffer {
    const len = this.varint(`${what} length`);
    return this.bytes(len, what);
  }
  get remaining(): number {
    return this.buf.length - this.pos;
  }
}

function toBytes(tx: string | Buffer, field: string): Buffer {
  if (Buffer.isBuffer(tx)) return tx;
  if (typeof tx !== 'string') throw new InvalidArgumentError(field, 'expected a hex-encoded transaction');
  if (tx.length === 0) throw new InvalidArgumentError(field, 'empty transaction');
  if (tx.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(tx)) {
    throw new InvalidArgumentError(field, 'expected a hex-encoded transaction (0-9, a-f in pairs)');
  }
  return Buffer.from(tx, 'hex');
}

export function isEf(bytes: Buffer): boolean {
  return bytes.length >= 10 && bytes.subarray(4, 10).equals(EF_MARKER);
}

/** Parses a raw or EF transaction (hex or bytes); InvalidArgumentError naming `field` when malformed. */
export function parseTx(tx: string | Buffer, field = 'tx'): ParsedTx {
  const bytes = toBytes(tx, field);
  const extended = isEf(bytes);
  const r = new Reader(bytes, field);
  const version = r.u32('version');
  if (extended) r.bytes(6, 'EF marker');
  const inputCount = r.varint('input count');
  const inputs: ParsedInput[] = [];
  for (let i = 0; i < inputCount; i++) {
    const prevTxid = Buffer.from(r.bytes(32, `input ${i} previous txid`));
    const vout = r.u32(`input ${i} previous output index`);
    const unlockingScript = Buffer.from(r.script(`input ${i} unlocking script`));
    const sequence = r.u32(`input ${i} sequence`);
    const input: ParsedInput = { prevTxid, prevTxidHex: txidToHex(prevTxid), vout, unlockingScript, sequence };
    if (extended) {
      input.satoshis = r.satoshis(`input ${i} previous satoshis`);
      input.lockingScript = Buffer.from(r.script(`input ${i} previous locking script`));
    }
    inputs.push(input);
  }
  const outputCount = r.varint('output count');
  const outputs: ParsedOutput[] = [];
  for (let i = 0; i < outputCount; i++) {
    const satoshis = r.satoshis(`output ${i} satoshis`);
    outputs.push({ satoshis, lockingScript: Buffer.from(r.script(`output ${i} locking script`)) });
  }
  const locktime = r.u32('locktime');
  if (r.remaining !== 0) throw new InvalidArgumentError(field, `${r.remaining} bytes after the locktime`);

  const isCoinbase = inputs.length === 1 && inputs[0].vout === 0xffffffff && inputs[0].prevTxid.every((b) => b === 0);
  const raw = extended
    ? assembleTx({
        version,
        locktime,
        inputs: inputs.map((i) => serializeInput(i, false)),
        outputs: outputs.map(serializeOutput),
        extended: false,
      })
    : bytes;
  let fee = 0;
  if (extended && !isCoinbase) {
    const totalIn = inputs.reduce((s, i) => s + (i.satoshis ?? 0), 0);
    const totalOut = outputs.reduce((s, o) => s + o.satoshis, 0);
    if (totalOut > totalIn) {
      throw new InvalidArgumentError(field, `outputs (${totalOut} sat) exceed inputs (${totalIn} sat)`);
    }
    fee = totalIn - totalOut;
  }
  const txid = txidOf(raw);
  return {
    txid,
    txidHex: txidToHex(txid),
    version,
    locktime,
    inputs,
    outputs,
    isExtended: extended,
    isCoinbase,
    fee,
    sizeInBytes: raw.length,
    extendedSize: bytes.length,
    raw,
    ef: extended ? bytes : undefined,
  };
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n), 0);
  return b;
}

/** One input in wire format; `extended` appends the previous output (EF). */
export function serializeInput(input: ParsedInput, extended: boolean): Buffer {
  const parts = [
    input.prevTxid,
    u32(input.vout),
    compactSize(input.unlockingScript.length),
    input.unlockingScript,
    u32(input.sequence),
  ];
  if (extended) {
    if (input.satoshis === undefined || input.lockingScript === undefined) {
      throw new RangeError('an extended input needs the previous satoshis and locking script');
    }
    parts.push(u64(input.satoshis), compactSize(input.lockingScript.length), input.lockingScript);
  }
  return Buffer.concat(parts);
}

export function serializeOutput(output: { satoshis: number; lockingScript: Buffer }): Buffer {
  return Buffer.concat([u64(output.satoshis), compactSize(output.lockingScript.length), output.lockingScript]);
}

/** One serialized output (as stored in the `outputs` bin): satoshis and locking script. */
export function parseOutput(bytes: Buffer, field = 'output'): ParsedOutput {
  const r = new Reader(bytes, field);
  const satoshis = r.satoshis('satoshis');
  return { satoshis, lockingScript: Buffer.from(r.script('locking script')) };
}

/** A tx from its serialized inputs and outputs (as stored in the `inputs`/`outputs` bins). */
export function assembleTx(parts: {
  version: number;
  locktime: number;
  inputs: Buffer[];
  outputs: Buffer[];
  extended: boolean;
}): Buffer {
  return Buffer.concat([
    u32(parts.version),
    ...(parts.extended ? [EF_MARKER] : []),
    compactSize(parts.inputs.length),
    ...parts.inputs,
    compactSize(parts.outputs.length),
    ...parts.outputs,
    u32(parts.locktime),
  ]);
}
