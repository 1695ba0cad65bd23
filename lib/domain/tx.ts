/**
 * Transaction parsing and serialization (docs/records.md): raw and extended format (EF, BIP-239).
 *
 * The parser reads the wire format byte for byte rather than through @bsv/sdk's Transaction: the UTXO hash and the
 * stored inputs/outputs must be the exact script bytes of the tx, and a script library re-encodes scripts from
 * parsed chunks (a non-canonical push would come back different). @bsv/sdk serves as the oracle in the tests.
 */
import { InvalidArgumentError } from './errors';
import { decodeHex } from './hex';
import { txidOf, txidToHex } from './txid';
import { compactSize, compactSizeLength, writeCompactSize } from './utxo-hash';

const EF_MARKER = Buffer.from('0000000000ef', 'hex');
const MAX_SATOSHIS = 21_000_000 * 100_000_000;

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
  /** the input's bytes as they stand in the parsed tx (EF form when the tx is EF): what serializeInput writes */
  wire?: Buffer;
}

export interface ParsedOutput {
  satoshis: number;
  lockingScript: Buffer;
  /** the output's bytes as they stand in the parsed tx: what serializeOutput writes */
  wire?: Buffer;
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

/**
 * Reads the wire format. The parts it returns (txids, scripts, an input's or output's wire bytes) are views of the
 * parsed bytes, not copies: they live as long as the tx's own bytes (`raw`/`ef`) do. `what` names the part read for the error message; inside an input or output (at()) it is
 * prefixed with "input 3 " or "output 3 " only when a message is built, so a read allocates no text.
 */
class Reader {
  pos = 0;
  private item: 'input' | 'output' | undefined;
  private index = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly field: string,
  ) {}

  /** the input or output being read (undefined: the tx's own fields) */
  at(item: 'input' | 'output' | undefined, index = 0): void {
    this.item = item;
    this.index = index;
  }
  private name(what: string, suffix = ''): string {
    return this.item === undefined ? `${what}${suffix}` : `${this.item} ${this.index} ${what}${suffix}`;
  }
  private need(n: number, what: string, suffix?: string): void {
    if (this.pos + n > this.buf.length) {
      throw new InvalidArgumentError(
        this.field,
        `truncated transaction: ${this.name(what, suffix)} at byte ${this.pos}`,
      );
    }
  }
  bytes(n: number, what: string): Buffer {
    this.need(n, what);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  u32(what: string, suffix?: string): number {
    this.need(4, what, suffix);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  satoshis(what: string): number {
    this.need(8, what);
    // two 32-bit halves, no BigInt: every amount up to 2^53 is exact, and anything above MAX_SATOSHIS (< 2^51) is
    // refused whether or not its double rounded
    const v = this.buf.readUInt32LE(this.pos) + this.buf.readUInt32LE(this.pos + 4) * 0x100000000;
    this.pos += 8;
    if (v > MAX_SATOSHIS) throw new InvalidArgumentError(this.field, `${this.name(what)} exceeds 21 million BSV`);
    return v;
  }
  varint(what: string, suffix?: string): number {
    this.need(1, what, suffix);
    const first = this.buf[this.pos++];
    if (first < 0xfd) return first;
    if (first === 0xfd) {
      this.need(2, what, suffix);
      const v = this.buf.readUInt16LE(this.pos);
      this.pos += 2;
      return v;
    }
    if (first === 0xfe) return this.u32(what, suffix);
    this.need(8, what, suffix);
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    if (v > BigInt(this.buf.length)) {
      throw new InvalidArgumentError(this.field, `${this.name(what, suffix)} is larger than the tx`);
    }
    return Number(v);
  }
  script(what: string): Buffer {
    const len = this.varint(what, ' length');
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
  const bytes = decodeHex(tx);
  if (bytes === undefined)
    throw new InvalidArgumentError(field, 'expected a hex-encoded transaction (0-9, a-f in pairs)');
  return bytes;
}

export function isEf(bytes: Buffer): boolean {
  if (bytes.length < 10) return false;
  for (let i = 0; i < 6; i++) if (bytes[4 + i] !== EF_MARKER[i]) return false;
  return true;
}

/**
 * A parsed input. Its display-hex parent txid is written when first asked (a spend asks it of every input; a create
 * only of a conflicting tx's): a create of a block's txs would otherwise encode a string per input it never reads.
 */
class Input implements ParsedInput {
  private hex: string | undefined;
  constructor(
    readonly prevTxid: Buffer,
    readonly vout: number,
    readonly unlockingScript: Buffer,
    readonly sequence: number,
    readonly satoshis: number | undefined,
    readonly lockingScript: Buffer | undefined,
    readonly wire: Buffer,
  ) {}
  get prevTxidHex(): string {
    return (this.hex ??= txidToHex(this.prevTxid));
  }
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
    r.at('input', i);
    const start = r.pos;
    const prevTxid = r.bytes(32, 'previous txid');
    const vout = r.u32('previous output index');
    const unlockingScript = r.script('unlocking script');
    const sequence = r.u32('sequence');
    let satoshis: number | undefined;
    let lockingScript: Buffer | undefined;
    if (extended) {
      satoshis = r.satoshis('previous satoshis');
      lockingScript = r.script('previous locking script');
    }
    inputs.push(
      new Input(prevTxid, vout, unlockingScript, sequence, satoshis, lockingScript, bytes.subarray(start, r.pos)),
    );
  }
  r.at(undefined);
  const outputCount = r.varint('output count');
  const outputs: ParsedOutput[] = [];
  for (let i = 0; i < outputCount; i++) {
    r.at('output', i);
    const start = r.pos;
    const satoshis = r.satoshis('satoshis');
    const lockingScript = r.script('locking script');
    outputs.push({ satoshis, lockingScript, wire: bytes.subarray(start, r.pos) });
  }
  r.at(undefined);
  const locktime = r.u32('locktime');
  if (r.remaining !== 0) throw new InvalidArgumentError(field, `${r.remaining} bytes after the locktime`);

  const isCoinbase = inputs.length === 1 && inputs[0].vout === 0xffffffff && inputs[0].prevTxid.every((b) => b === 0);
  const raw = extended ? serializeTx(version, locktime, inputs, outputs) : bytes;
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

/** Writes `n` as uint64 LE at `at`; returns the offset after it. */
function writeU64(out: Buffer, n: number, at: number): number {
  if (Number.isSafeInteger(n) && n >= 0) {
    out.writeUInt32LE(n % 0x100000000, at);
    return out.writeUInt32LE(Math.floor(n / 0x100000000), at + 4);
  }
  return out.writeBigUInt64LE(BigInt(n), at);
}

function inputSize(input: ParsedInput, extended: boolean): number {
  const u = input.unlockingScript.length;
  const base = input.prevTxid.length + 4 + compactSizeLength(u) + u + 4;
  if (!extended) return base;
  if (input.satoshis === undefined || input.lockingScript === undefined) {
    throw new RangeError('an extended input needs the previous satoshis and locking script');
  }
  const l = input.lockingScript.length;
  return base + 8 + compactSizeLength(l) + l;
}

/** Writes one input (inputSize bytes) at `at`; returns the offset after it. */
function writeInput(out: Buffer, input: ParsedInput, extended: boolean, at: number): number {
  at += input.prevTxid.copy(out, at);
  at = out.writeUInt32LE(input.vout >>> 0, at);
  at = writeCompactSize(out, input.unlockingScript.length, at);
  at += input.unlockingScript.copy(out, at);
  at = out.writeUInt32LE(input.sequence >>> 0, at);
  if (extended) {
    at = writeU64(out, input.satoshis!, at);
    at = writeCompactSize(out, input.lockingScript!.length, at);
    at += input.lockingScript!.copy(out, at);
  }
  return at;
}

function outputSize(output: { satoshis: number; lockingScript: Buffer }): number {
  const l = output.lockingScript.length;
  return 8 + compactSizeLength(l) + l;
}

function writeOutput(out: Buffer, output: { satoshis: number; lockingScript: Buffer }, at: number): number {
  at = writeU64(out, output.satoshis, at);
  at = writeCompactSize(out, output.lockingScript.length, at);
  return at + output.lockingScript.copy(out, at);
}

/** The raw (non-extended) serialization of parsed parts, in one buffer: what assembleTx gives for them. */
function serializeTx(version: number, locktime: number, inputs: ParsedInput[], outputs: ParsedOutput[]): Buffer {
  let size = 4 + compactSizeLength(inputs.length) + compactSizeLength(outputs.length) + 4;
  for (const input of inputs) size += inputSize(input, false);
  for (const output of outputs) size += outputSize(output);
  const out = Buffer.allocUnsafe(size);
  let at = out.writeUInt32LE(version >>> 0, 0);
  at = writeCompactSize(out, inputs.length, at);
  for (const input of inputs) at = writeInput(out, input, false, at);
  at = writeCompactSize(out, outputs.length, at);
  for (const output of outputs) at = writeOutput(out, output, at);
  out.writeUInt32LE(locktime >>> 0, at);
  return out;
}

/** One input in wire format; `extended` appends the previous output (EF). */
export function serializeInput(input: ParsedInput, extended: boolean): Buffer {
  const out = Buffer.allocUnsafe(inputSize(input, extended));
  writeInput(out, input, extended, 0);
  return out;
}

export function serializeOutput(output: { satoshis: number; lockingScript: Buffer }): Buffer {
  const out = Buffer.allocUnsafe(outputSize(output));
  writeOutput(out, output, 0);
  return out;
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
