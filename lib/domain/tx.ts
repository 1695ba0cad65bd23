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
/** an EF tx's version and marker: its input count starts here */
const EF_HEADER = 4 + EF_MARKER.length;
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
 * Reads the wire format: numbers, and where the parts (txids, scripts) start; a parsed input or output makes its parts
 * as views of the parsed bytes, not copies, which live as long as the tx's own bytes (`raw`/`ef`) do. `what` names
 * the part read for the error message; inside an input or output (at()) it is prefixed with "input 3 " or "output 3 "
 * only when a message is built, so a read allocates no text.
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
  /** Moves past `n` bytes; returns where they start. */
  skip(n: number, what: string): number {
    this.need(n, what);
    const start = this.pos;
    this.pos += n;
    return start;
  }
  /** Moves past a length-prefixed script; returns where its bytes start (they end at pos). */
  skipScript(what: string): number {
    return this.skip(this.varint(what, ' length'), what);
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
  if (bytes.length < EF_HEADER) return false;
  for (let i = 0; i < EF_MARKER.length; i++) if (bytes[4 + i] !== EF_MARKER[i]) return false;
  return true;
}

/**
 * A parsed input: offsets into the tx's bytes, its parts made as views when asked (each ask a new view). A block's
 * worth of txs stays alive while its records are written, and a view per script, txid and input kept for every input
 * was most of that: a create keeps only the wire bytes it stores, a spend only the parent txid. The display-hex
 * parent txid is written once, when first asked (a spend asks it of every input, a create only of a conflicting tx's).
 */
class Input implements ParsedInput {
  private hex: string | undefined;
  constructor(
    private readonly tx: Buffer,
    /** where the input starts: its parent txid */
    private readonly start: number,
    readonly vout: number,
    private readonly scriptStart: number,
    readonly sequence: number,
    /** after the sequence: the end of its raw form */
    private readonly rawEnd: number,
    readonly satoshis: number | undefined,
    /** EF: where the previous locking script starts (it ends at `end`) */
    private readonly lockStart: number,
    private readonly end: number,
  ) {}
  get prevTxid(): Buffer {
    return this.tx.subarray(this.start, this.start + 32);
  }
  get prevTxidHex(): string {
    return (this.hex ??= txidToHex(this.prevTxid));
  }
  get unlockingScript(): Buffer {
    return this.tx.subarray(this.scriptStart, this.rawEnd - 4);
  }
  get lockingScript(): Buffer | undefined {
    return this.satoshis === undefined ? undefined : this.tx.subarray(this.lockStart, this.end);
  }
  get wire(): Buffer {
    return this.tx.subarray(this.start, this.end);
  }
  /** copies the input's raw form (no previous output) to `out` at `at`; returns the offset after it */
  copyRaw(out: Buffer, at: number): number {
    return at + this.tx.copy(out, at, this.start, this.rawEnd);
  }
  get rawSize(): number {
    return this.rawEnd - this.start;
  }
  /** true for the coinbase's null parent txid */
  get hasNullParent(): boolean {
    for (let i = this.start; i < this.start + 32; i++) if (this.tx[i] !== 0) return false;
    return true;
  }
}

/** A parsed output: offsets into the tx's bytes, its locking script and wire bytes made as views when asked. */
class Output implements ParsedOutput {
  constructor(
    private readonly tx: Buffer,
    private readonly start: number,
    readonly satoshis: number,
    private readonly scriptStart: number,
    private readonly end: number,
  ) {}
  get lockingScript(): Buffer {
    return this.tx.subarray(this.scriptStart, this.end);
  }
  get wire(): Buffer {
    return this.tx.subarray(this.start, this.end);
  }
}

/** Parses a raw or EF transaction (hex or bytes); InvalidArgumentError naming `field` when malformed. */
export function parseTx(tx: string | Buffer, field = 'tx'): ParsedTx {
  const bytes = toBytes(tx, field);
  const extended = isEf(bytes);
  const r = new Reader(bytes, field);
  const version = r.u32('version');
  if (extended) r.skip(6, 'EF marker');
  const inputCount = r.varint('input count');
  const inputsStart = r.pos;
  const inputs: Input[] = [];
  for (let i = 0; i < inputCount; i++) {
    r.at('input', i);
    const start = r.skip(32, 'previous txid');
    const vout = r.u32('previous output index');
    const scriptStart = r.skipScript('unlocking script');
    const sequence = r.u32('sequence');
    const rawEnd = r.pos;
    let satoshis: number | undefined;
    let lockStart = r.pos;
    if (extended) {
      satoshis = r.satoshis('previous satoshis');
      lockStart = r.skipScript('previous locking script');
    }
    inputs.push(new Input(bytes, start, vout, scriptStart, sequence, rawEnd, satoshis, lockStart, r.pos));
  }
  r.at(undefined);
  const outputsStart = r.pos;
  const outputCount = r.varint('output count');
  const outputs: Output[] = [];
  for (let i = 0; i < outputCount; i++) {
    r.at('output', i);
    const start = r.pos;
    const satoshis = r.satoshis('satoshis');
    const scriptStart = r.skipScript('locking script');
    outputs.push(new Output(bytes, start, satoshis, scriptStart, r.pos));
  }
  r.at(undefined);
  const locktime = r.u32('locktime');
  if (r.remaining !== 0) throw new InvalidArgumentError(field, `${r.remaining} bytes after the locktime`);

  const isCoinbase = inputs.length === 1 && inputs[0].vout === 0xffffffff && inputs[0].hasNullParent;
  const raw = extended ? rawOfExtended(bytes, inputs, inputsStart, outputsStart) : bytes;
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

/**
 * The raw (non-extended) serialization of an EF tx, copied from its bytes: the version, the input count, each
 * input without its previous output, and everything from the output count on (outputs and locktime as they stand).
 */
function rawOfExtended(ef: Buffer, inputs: Input[], inputsStart: number, outputsStart: number): Buffer {
  let size = 4 + (inputsStart - EF_HEADER) + (ef.length - outputsStart);
  for (const input of inputs) size += input.rawSize;
  const out = Buffer.allocUnsafe(size);
  let at = ef.copy(out, 0, 0, 4);
  at += ef.copy(out, at, EF_HEADER, inputsStart); // the input count, after the EF marker
  for (const input of inputs) at = input.copyRaw(out, at);
  ef.copy(out, at, outputsStart);
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
  const start = r.skipScript('locking script');
  return { satoshis, lockingScript: Buffer.from(bytes.subarray(start, r.pos)) };
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
