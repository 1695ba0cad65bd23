/**
 * Binary batch bodies (application/octet-stream, docs/api.md "Binary batch bodies") through the local server: each
 * write batch answers a frame with the results its JSON body gets for the same items; a malformed frame is 400
 * BAD_FRAME naming the byte offset and the item and stores nothing; the JSON route's limits hold (MAX_BATCH_ITEMS, the
 * body size); random bytes and every truncation of a valid frame get a 4xx, never a 5xx, and store nothing.
 */
import './quiet-logs';
import fc from 'fast-check';
import { encodeBatchFrame } from '@bsv-utxo-store/client';
import { MAX_BINARY_BODY_BYTES } from '../../lib/http/payload-limits';
import { coinbaseTx, makeTx, mixedSpends, rootTx, spendItem } from '../fixtures/txs';
import { expectBadArgument, expectError, startApi, type Api, type Reply } from './harness';

let api: Api;

beforeAll(async () => {
  api = await startApi({ MAX_BATCH_ITEMS: '6' });
  expect((await api.put('/v1/chain/tip/force', { height: 1000 })).status).toBe(200);
});

afterAll(async () => {
  await api?.close();
});

const OCTETS = { 'content-type': 'application/octet-stream' };
const postFrame = (path: string, frame: Uint8Array): Promise<Reply> =>
  api.raw('POST', path, Buffer.from(frame), OCTETS);
const createFrame = (body: Parameters<typeof encodeBatchFrame>[1]) =>
  Buffer.from(encodeBatchFrame('createMany', body)!);
const spendFrame = (body: Parameters<typeof encodeBatchFrame>[1]) => Buffer.from(encodeBatchFrame('spendMany', body)!);
const stored = async (txid: string) => (await api.get(`/v1/txs/${txid}`)).status === 200;
const statuses = (reply: Reply) => (reply.body.results as { status: number }[]).map((r) => r.status);

describe('each write batch answers a frame as it answers the same items in JSON', () => {
  test('POST /v1/batch/txs: the per-item results, options included', async () => {
    const [a, b, c] = [rootTx(2), rootTx(1), coinbaseTx(1)];
    expect((await api.post('/v1/txs', { tx: b.hex })).status).toBe(201);
    const body = {
      txs: [
        { tx: a.hex, minedBlocks: [{ blockId: 3, blockHeight: 990, subtreeIdx: 1 }], blockHeight: 990 },
        { tx: b.hex },
        { tx: 'abcd' },
        { tx: a.hex, locked: 'yes' as unknown as boolean },
        { tx: a.hex },
        { tx: c.hex, isCoinbase: true, blockHeight: 995 },
      ],
    };
    const framed = await postFrame('/v1/batch/txs', createFrame(body));
    expect(framed.status).toBe(200);
    expect(statuses(framed)).toEqual([201, 409, 400, 400, 409, 201]);
    expect((await api.get(`/v1/txs/${a.txid}?fields=blockHeights,blockIDs`)).body).toMatchObject({
      blockHeights: [990],
      blockIDs: [3],
    });
    // back to the state before, then the same items as JSON
    for (const f of [a, c]) expect((await api.del(`/v1/txs/${f.txid}`)).status).toBe(204);
    const json = await api.post('/v1/batch/txs', body);
    expect(json.status).toBe(200);
    expect(framed.body).toEqual(json.body);

    const brief = await postFrame('/v1/batch/txs', createFrame({ txs: [{ tx: rootTx(1).hex }], brief: true }));
    expect(brief.body).toEqual({ results: [{ status: 201 }] });
  });

  test('POST /v1/batch/spends: the per-item results with the request options', async () => {
    const [p, q, r] = [rootTx(1), rootTx(1), rootTx(1)];
    for (const f of [p, q, r]) expect((await api.post('/v1/txs', { tx: f.hex })).status).toBe(201);
    const { first, second, ghost, ok } = mixedSpends(p, q, r);
    const body = { txs: [first.hex, second.hex, ghost.hex, 'abcd', ok.hex], blockHeight: 1000, ignoreLocked: false };
    const framed = await postFrame('/v1/batch/spends', spendFrame(body));
    expect(framed.status).toBe(200);
    expect(statuses(framed)).toEqual([200, 409, 404, 400, 200]);
    expect(framed.body.results[1].error.details.spends).toEqual([
      expect.objectContaining({ txid: q.txid, vout: 0, status: 'ROLLED_BACK' }),
      expect.objectContaining({ txid: p.txid, vout: 0, status: 'ERROR', code: 'SPENT', spendingTxid: first.txid }),
    ]);
    const undo = await api.post('/v1/unspends', { spends: [spendItem(p, 0, first), spendItem(r, 0, ok)] });
    expect(undo.status).toBe(200);
    const json = await api.post('/v1/batch/spends', body);
    expect(framed.body).toEqual(json.body);
  });
});

describe('malformed frames: 400 BAD_FRAME naming the byte offset and the item; nothing stored', () => {
  const [a, b] = [rootTx(1), rootTx(1)];
  // a's item: options length at 14, tx length at 18, tx at 22; b's item right after
  const frame = () => createFrame({ txs: [{ tx: a.hex }, { tx: b.hex }] });
  const bItem = 22 + a.hex.length / 2;
  const u32 = (n: number) => {
    const out = Buffer.alloc(4);
    out.writeUInt32LE(n);
    return out;
  };
  const patch = (at: number, bytes: Buffer) => {
    const f = frame();
    bytes.copy(f, at);
    return f;
  };
  const withBOptions = (text: string) =>
    Buffer.concat([
      frame().subarray(0, bItem),
      u32(Buffer.byteLength(text)),
      Buffer.from(text),
      frame().subarray(bItem + 4),
    ]);

  test.each([
    ['bad magic', () => patch(0, Buffer.from('JSON')), 0, undefined],
    ['bad version', () => patch(4, Buffer.from([9])), 4, undefined],
    ['a spends frame', () => spendFrame({ txs: [a.hex] }), 5, undefined],
    ['truncated item', () => frame().subarray(0, bItem + 6), bItem + 4, 1],
    ['tx length past the end', () => patch(bItem + 4, u32(10_000)), bItem + 4, 1],
    ['trailing bytes', () => Buffer.concat([frame(), Buffer.from([0])]), frame().length, undefined],
    ['item options not JSON', () => withBOptions('{"locked":true'), bItem + 4, 1],
  ])('%s', async (_name, body, offset, item) => {
    const reply = await postFrame('/v1/batch/txs', (body as () => Buffer)());
    const error = expectError(reply, 400, 'BAD_FRAME');
    expect(error.details).toEqual(item === undefined ? { offset } : { offset, item });
    expect(error.message).toContain(`byte ${offset}${item === undefined ? ':' : `, item ${item}:`}`);
    expect([await stored(a.txid), await stored(b.txid)]).toEqual([false, false]);
  });

  test("the JSON route's refusals: too many items, no items, a bad request option; each as the JSON body's", async () => {
    const seven = { txs: Array.from({ length: 7 }, () => ({ tx: a.hex })) };
    const tooMany = await postFrame('/v1/batch/txs', createFrame(seven));
    expectBadArgument(tooMany, 'txs');
    expect(tooMany.body).toEqual((await api.post('/v1/batch/txs', seven)).body);
    const none = await postFrame('/v1/batch/spends', spendFrame({ txs: [] }));
    expect(none.body).toEqual((await api.post('/v1/batch/spends', { txs: [] })).body);
    expectBadArgument(none, 'txs');
    const badBrief = { txs: [{ tx: a.hex }], brief: 'yes' as unknown as boolean };
    const bad = await postFrame('/v1/batch/txs', createFrame(badBrief));
    expectBadArgument(bad, 'brief');
    expect(bad.body).toEqual((await api.post('/v1/batch/txs', badBrief)).body);
    expect(await stored(a.txid)).toBe(false);
  });

  test('a binary body on a JSON route is 400 naming the body; one over the binary limit is 413', async () => {
    expectBadArgument(await postFrame('/v1/txs', frame()), 'body');
    const big = createFrame({ txs: [{ tx: '00'.repeat(MAX_BINARY_BODY_BYTES) }] });
    expectError(await postFrame('/v1/batch/txs', big), 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('fuzz: never a 5xx, nothing stored', () => {
  test('every truncation of a valid frame, and random bytes, get a 4xx', async () => {
    const [p, q] = [rootTx(2), rootTx(1)];
    expect((await api.post('/v1/txs', { tx: p.hex })).status).toBe(201);
    const child = makeTx({ inputs: [{ parent: p, vout: 0 }] });
    const create = createFrame({ txs: [{ tx: q.hex, locked: false }, { tx: child.hex }], brief: true });
    const spend = spendFrame({ txs: [child.hex], blockHeight: 1000 });
    const seen = new Set<number>();
    for (const [path, full] of [
      ['/v1/batch/txs', create],
      ['/v1/batch/spends', spend],
    ] as const) {
      for (let cut = 0; cut < full.length; cut++) {
        const reply = await postFrame(path, full.subarray(0, cut));
        seen.add(reply.status);
        expect({ cut, status: reply.status }).toEqual({ cut, status: 400 });
      }
    }
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), fc.boolean(), async (bytes, spends) => {
        const reply = await postFrame(spends ? '/v1/batch/spends' : '/v1/batch/txs', Buffer.from(bytes));
        seen.add(reply.status);
        expect(reply.status).toBeGreaterThanOrEqual(400);
        expect(reply.status).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
    expect([...seen]).toEqual([400]);
    expect([await stored(q.txid), await stored(child.txid)]).toEqual([false, false]);
    expect((await api.get(`/v1/utxos/${p.txid}/0`)).body).toEqual({ status: 'OK' });
    // the whole frames do what the truncated ones did not
    expect(statuses(await postFrame('/v1/batch/txs', create))).toEqual([201, 201]);
    expect(statuses(await postFrame('/v1/batch/spends', spend))).toEqual([200]);
  }, 120_000);
});
