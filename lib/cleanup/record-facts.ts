/**
 * The few byte facts of DESIGN section 3 that cleanup reads from records: keys, slots, spending data and the
 * outpoints of a tx's own inputs. Kept here (pure, no I/O) because cleanup only ever reads these facts; the
 * domain modules of lib/domain hold the full encoders.
 */
const TXID_LEN = 32;
const SPENDING_DATA_LEN = 36;
const SPENT_SLOT_LEN = 68;
const FROZEN = Buffer.alloc(SPENDING_DATA_LEN, 0xff);

export function txidHex(txid: Buffer): string {
  return Buffer.from(txid).reverse().toString('hex');
}

export function txidBytes(displayHex: string): Buffer {
  return Buffer.from(displayHex, 'hex').reverse();
}

/** Key of record n of a tx: the master (n = 0) is the bare txid; pagination record n >= 1 appends uint32 LE n. */
export function keyOfRecord(txid: Buffer, n: number): Buffer {
  if (n === 0) return Buffer.from(txid);
  const suffix = Buffer.alloc(4);
  suffix.writeUInt32LE(n, 0);
  return Buffer.concat([txid, suffix]);
}

export interface SpendingChild {
  /** child txid, internal order */
  txid: Buffer;
  /** display hex */
  txidHex: string;
  vin: number;
}

export type SlotState = 'none' | 'unspent' | 'spent' | 'frozen' | 'invalid';

export function slotState(slot: unknown): SlotState {
  if (slot === null || slot === undefined) return 'none';
  if (!Buffer.isBuffer(slot)) return 'invalid';
  if (slot.length === TXID_LEN) return 'unspent';
  if (slot.length !== SPENT_SLOT_LEN) return 'invalid';
  return slot.subarray(TXID_LEN).equals(FROZEN) ? 'frozen' : 'spent';
}

/** The spender of a spent (non-frozen, 68-byte) slot. */
export function spendingChildOf(slot: Buffer): SpendingChild {
  const txid = Buffer.from(slot.subarray(TXID_LEN, TXID_LEN + 32));
  return { txid, txidHex: txidHex(txid), vin: slot.readUInt32LE(TXID_LEN + 32) };
}

export interface Outpoint {
  /** previous txid, internal order */
  txid: Buffer;
  vout: number;
}

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  get left(): number {
    return this.buf.length - this.pos;
  }
  take(n: number): Buffer {
    if (n < 0 || n > this.left) throw new RangeError('truncated');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  u32(): number {
    return this.take(4).readUInt32LE(0);
  }
  varint(): number {
    const first = this.take(1)[0];
    if (first < 0xfd) return first;
    if (first === 0xfd) return this.take(2).readUInt16LE(0);
    if (first === 0xfe) return this.u32();
    const big = this.take(8).readBigUInt64LE(0);
    if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('varint too large');
    return Number(big);
  }
}

const EF_MARKER = Buffer.from('0000000000ef', 'hex');

function readEfInput(r: Reader): Outpoint {
  const txid = Buffer.from(r.take(32));
  const vout = r.u32();
  r.take(r.varint()); // unlocking script
  r.take(4); // sequence
  r.take(8); // previous satoshis
  r.take(r.varint()); // previous locking script
  return { txid, vout };
}

function readPlainInput(r: Reader): Outpoint {
  const txid = Buffer.from(r.take(32));
  const vout = r.u32();
  r.take(r.varint());
  r.take(4);
  return { txid, vout };
}

/**
 * Outpoints of the `inputs` bin (EF input bytes). Accepts the inputs with or without a leading CompactSize count;
 * the form that consumes the bytes exactly wins. Null when neither does (unknown encoding: the caller keeps the tx).
 */
export function outpointsOfInputsBin(bytes: Buffer): Outpoint[] | null {
  const attempts: ((r: Reader) => Outpoint[])[] = [
    (r) => {
      const n = r.varint();
      const out: Outpoint[] = [];
      for (let i = 0; i < n; i++) out.push(readEfInput(r));
      return out;
    },
    (r) => {
      const out: Outpoint[] = [];
      while (r.left > 0) out.push(readEfInput(r));
      return out;
    },
  ];
  for (const attempt of attempts) {
    try {
      const r = new Reader(bytes);
      const out = attempt(r);
      if (r.left === 0) return out;
    } catch {
      // try the next form
    }
  }
  return null;
}

/** Outpoints of a serialized tx (EF as in the `.tx` blob, or plain). Null when the bytes do not parse. */
export function outpointsOfTx(bytes: Buffer): Outpoint[] | null {
  try {
    const r = new Reader(bytes);
    r.take(4); // version
    const ef = bytes.length >= 10 && bytes.subarray(4, 10).equals(EF_MARKER);
    if (ef) r.take(6);
    const n = r.varint();
    const out: Outpoint[] = [];
    for (let i = 0; i < n; i++) out.push(ef ? readEfInput(r) : readPlainInput(r));
    return out;
  } catch {
    return null;
  }
}

/** A coinbase input spends the null outpoint: there is no parent to update. */
export function isNullOutpoint(o: Outpoint): boolean {
  return o.vout === 0xffffffff && o.txid.every((b) => b === 0);
}
