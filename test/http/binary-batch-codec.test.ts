/**
 * The binary batch frame (lib/http/binary-batch.ts): encode -> decode is the identity for any txs and options; the
 * server's codec and the client's encoder (packages/client/src/binary-batch.ts) write the same bytes, the golden ones
 * of the layout table; a malformed frame is a FrameError naming the byte offset and the item, whatever the bytes.
 */
import fc from 'fast-check';
import { encodeBatchFrame as clientEncode } from '@bsv-utxo-store/client';
import {
  decodeBatchFrame,
  encodeBatchFrame,
  FRAME_KIND,
  FrameError,
  type BatchFrame,
  type FrameKind,
} from '../../lib/http/binary-batch';
import {
  GOLDEN_CREATE_HEX,
  GOLDEN_CREATE_REQUEST,
  GOLDEN_SPEND_HEX,
  GOLDEN_SPEND_REQUEST,
} from '../fixtures/batch-frame-golden';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const GOLDEN_CREATE = Buffer.from(GOLDEN_CREATE_HEX, 'hex');
const GOLDEN_SPEND = Buffer.from(GOLDEN_SPEND_HEX, 'hex');

/** The FrameError a decode throws (fails the test when it throws something else or nothing). */
function frameError(body: Buffer, kind?: FrameKind): FrameError {
  try {
    decodeBatchFrame(body, kind);
  } catch (err) {
    if (err instanceof FrameError) return err;
    throw err;
  }
  throw new Error('the frame decoded');
}

const options = (reserved: string) =>
  fc.option(
    fc.dictionary(
      fc.string().filter((k) => k !== reserved),
      fc.jsonValue(),
    ),
    { nil: undefined },
  );

const frames: fc.Arbitrary<BatchFrame> = fc.oneof(
  fc.record({
    kind: fc.constant(FRAME_KIND.txs),
    options: options('txs'),
    items: fc.array(fc.record({ options: options('tx'), tx: fc.uint8Array({ maxLength: 300 }) }), { maxLength: 20 }),
  }),
  fc.record({
    kind: fc.constant(FRAME_KIND.spends),
    options: options('txs'),
    items: fc.array(fc.record({ tx: fc.uint8Array({ maxLength: 300 }) }), { maxLength: 20 }),
  }),
);

/** Options as they come back: JSON's copy, and none for `{}`. */
function asDecoded(value: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  const copy = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  return Object.keys(copy).length === 0 ? undefined : copy;
}

describe('round trip', () => {
  test('decode(encode(frame)) gives back the kind, the options and every tx, byte for byte', () => {
    fc.assert(
      fc.property(frames, (frame) => {
        const decoded = decodeBatchFrame(encodeBatchFrame(frame), frame.kind);
        expect(decoded.kind).toBe(frame.kind);
        expect(decoded.options).toEqual(asDecoded(frame.options));
        expect(decoded.items).toHaveLength(frame.items.length);
        decoded.items.forEach((item, i) => {
          const sent = frame.items[i];
          expect(hex(item.tx)).toBe(hex(sent.tx));
          expect(item.options).toEqual(asDecoded('options' in sent ? sent.options : undefined));
        });
      }),
      { numRuns: 300 },
    );
  });

  test('the client encoder writes the bytes the server codec writes, for any createMany and spendMany body', () => {
    const txHex = fc.uint8Array({ minLength: 1, maxLength: 200 }).map(hex);
    const createItem = fc.record(
      {
        tx: txHex,
        blockHeight: fc.nat(),
        minedBlocks: fc.array(fc.record({ blockId: fc.nat(), blockHeight: fc.nat(), subtreeIdx: fc.nat() })),
        isCoinbase: fc.boolean(),
        locked: fc.boolean(),
        conflicting: fc.boolean(),
      },
      { requiredKeys: ['tx'] },
    );
    const create = fc.record(
      { txs: fc.array(createItem, { minLength: 1, maxLength: 10 }), brief: fc.boolean() },
      { requiredKeys: ['txs'] },
    );
    const spend = fc.record(
      {
        txs: fc.array(txHex, { minLength: 1, maxLength: 10 }),
        ignoreConflicting: fc.boolean(),
        ignoreLocked: fc.boolean(),
        blockHeight: fc.nat(),
        brief: fc.boolean(),
      },
      { requiredKeys: ['txs'] },
    );
    fc.assert(
      fc.property(create, spend, (c, s) => {
        const { txs: createTxs, ...createOptions } = c;
        const serverCreate = encodeBatchFrame({
          kind: FRAME_KIND.txs,
          options: createOptions,
          items: createTxs.map(({ tx, ...rest }) => ({ options: rest, tx: Buffer.from(tx, 'hex') })),
        });
        expect(hex(clientEncode('createMany', c)!)).toBe(hex(serverCreate));
        const { txs: spendTxs, ...spendOptions } = s;
        const serverSpend = encodeBatchFrame({
          kind: FRAME_KIND.spends,
          options: spendOptions,
          items: spendTxs.map((tx) => ({ tx: Buffer.from(tx, 'hex') })),
        });
        expect(hex(clientEncode('spendMany', s)!)).toBe(hex(serverSpend));
      }),
      { numRuns: 200 },
    );
  });
});

describe('golden bytes (test/fixtures/batch-frame-golden.ts)', () => {
  test('both encoders write them, and the codec reads them back', () => {
    expect(hex(clientEncode('createMany', GOLDEN_CREATE_REQUEST)!)).toBe(GOLDEN_CREATE_HEX);
    expect(hex(clientEncode('spendMany', GOLDEN_SPEND_REQUEST)!)).toBe(GOLDEN_SPEND_HEX);
    const { txs: createTxs, ...createOptions } = GOLDEN_CREATE_REQUEST;
    const create: BatchFrame = {
      kind: FRAME_KIND.txs,
      options: createOptions,
      items: createTxs.map(({ tx, ...rest }) => ({ options: rest, tx: Buffer.from(tx, 'hex') })),
    };
    expect(hex(encodeBatchFrame(create))).toBe(GOLDEN_CREATE_HEX);
    const decoded = decodeBatchFrame(GOLDEN_CREATE, FRAME_KIND.txs);
    expect({ ...decoded, items: decoded.items.map((i) => ({ ...i, tx: hex(i.tx) })) }).toEqual({
      kind: 1,
      options: { brief: true },
      items: [
        { options: { blockHeight: 7, minedBlocks: [{ blockId: 1, blockHeight: 7, subtreeIdx: 0 }] }, tx: '0100ab' },
        { tx: 'ff' },
      ],
    });
    const { txs: spendTxs, ...spendOptions } = GOLDEN_SPEND_REQUEST;
    const spend: BatchFrame = {
      kind: FRAME_KIND.spends,
      options: spendOptions,
      items: spendTxs.map((tx) => ({ tx: Buffer.from(tx, 'hex') })),
    };
    expect(hex(encodeBatchFrame(spend))).toBe(GOLDEN_SPEND_HEX);
    expect(decodeBatchFrame(GOLDEN_SPEND, FRAME_KIND.spends).items.map((i) => hex(i.tx))).toEqual(['beef', '00']);
  });

  test('a tx that is not hex (or empty) is not framed by the client: that request goes as JSON', () => {
    for (const tx of ['zz', 'abc', '', 'ab0g']) {
      expect(clientEncode('spendMany', { txs: ['00', tx] })).toBeUndefined();
      expect(clientEncode('createMany', { txs: [{ tx }] })).toBeUndefined();
    }
    expect(clientEncode('spendMany', { txs: ['AbCd'] })).toBeDefined();
  });
});

describe('malformed frames: a FrameError naming the byte offset and the item', () => {
  // the golden create frame: options at 10 (14 bytes), count at 24, item 0 at 28 (options at 32, 78 bytes; tx length
  // at 110, tx at 114), item 1 at 117 (tx length at 121, tx at 125), 126 bytes
  const patched = (at: number, bytes: string, from = GOLDEN_CREATE) => {
    const b = Buffer.from(from);
    Buffer.from(bytes, 'hex').copy(b, at);
    return b;
  };
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b.toString('hex');
  };
  /** the golden create frame with item 0's options replaced by `text` */
  const withItemOptions = (text: Buffer) =>
    Buffer.concat([
      GOLDEN_CREATE.subarray(0, 28),
      Buffer.from(u32(text.length), 'hex'),
      text,
      GOLDEN_CREATE.subarray(110),
    ]);

  test.each([
    ['bad magic', patched(0, '55545843'), 0, undefined, /magic "UTXB"/],
    ['bad version', patched(4, '02'), 4, undefined, /version 2 is not supported/],
    ['unknown kind', patched(5, '09'), 5, undefined, /unknown kind 9/],
    ['request options length past the end', patched(6, u32(5000)), 6, undefined, /runs past the end/],
    ['item count past the end', patched(24, u32(1000)), 24, undefined, /item count 1000/],
    ['truncated item', GOLDEN_CREATE.subarray(0, 123), 121, 1, /tx length \(4 bytes\) runs past the end/],
    ['tx length past the end', patched(121, u32(2)), 121, 1, /tx length 2 runs past the end/],
    ['item options length past the end', patched(117, u32(99)), 117, 1, /options length 99 runs past/],
    ['trailing bytes', Buffer.concat([GOLDEN_CREATE, Buffer.from('00', 'hex')]), 126, undefined, /1 trailing bytes/],
    ['item options not JSON', withItemOptions(Buffer.from('{"locked":')), 32, 0, /not UTF-8 JSON/],
    ['item options not UTF-8', withItemOptions(Buffer.from('7b22ff223a317d', 'hex')), 32, 0, /not UTF-8 JSON/],
    ['item options not an object', withItemOptions(Buffer.from('[1]')), 32, 0, /must be a JSON object/],
    ['item options holding the tx', withItemOptions(Buffer.from('{"tx":"00"}')), 32, 0, /may not hold "tx"/],
    ['a spend item with options', patched(57, u32(1), GOLDEN_SPEND), 57, 0, /a spend item has no options/],
  ])('%s', (_name, body, offset, item, message) => {
    const err = frameError(body as Buffer);
    expect({ offset: err.offset, item: err.item }).toEqual({ offset, item });
    expect(err.message).toMatch(message as RegExp);
    expect(err.message).toMatch(new RegExp(`^byte ${offset}${item === undefined ? ':' : `, item ${item}:`}`));
  });

  test('request options that are not JSON, or hold txs; a frame of the other route', () => {
    const frame = (text: string) =>
      Buffer.concat([
        GOLDEN_CREATE.subarray(0, 6),
        Buffer.from(u32(Buffer.byteLength(text)), 'hex'),
        Buffer.from(text),
        GOLDEN_CREATE.subarray(24),
      ]);
    expect(frameError(frame('{"brief":tru}'))).toMatchObject({ offset: 10, item: undefined });
    expect(frameError(frame('null')).message).toMatch(/must be a JSON object/);
    expect(frameError(frame('{"txs":[]}')).message).toMatch(/may not hold "txs"/);
    expect(decodeBatchFrame(frame('{"brief":false}')).options).toEqual({ brief: false });
    const other = frameError(GOLDEN_SPEND, FRAME_KIND.txs);
    expect(other).toMatchObject({ offset: 5, item: undefined });
    expect(other.message).toMatch(/kind 2 \(POST \/v1\/batch\/spends\) sent to POST \/v1\/batch\/txs/);
  });

  test('every truncation of a valid frame is a FrameError; random bytes are one or a frame, never another error', () => {
    for (const frame of [GOLDEN_CREATE, GOLDEN_SPEND]) {
      for (let cut = 0; cut < frame.length; cut++)
        expect(frameError(frame.subarray(0, cut))).toBeInstanceOf(FrameError);
    }
    const head = GOLDEN_CREATE.subarray(0, 6);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.boolean(), (bytes, withHead) => {
        const body = withHead ? Buffer.concat([head, bytes]) : Buffer.from(bytes);
        try {
          decodeBatchFrame(body);
        } catch (err) {
          expect(err).toBeInstanceOf(FrameError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
