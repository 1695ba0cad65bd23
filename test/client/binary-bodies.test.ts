/**
 * The client's write batches go as binary frames by default (application/octet-stream, the frame the server reads:
 * docs/api.md "Binary batch bodies"), over plain HTTP to the local server and signed over SigV4, with the same results
 * as JSON; `binaryBatches: false` sends JSON; a batch holding a tx that is not hex goes as JSON (the server answers
 * that item as it always has); the other batches stay JSON.
 */
import '../http/quiet-logs';
import { createHash } from 'crypto';
import {
  awsClient,
  encodeBatchFrame,
  HttpTransport,
  InvalidArgumentError,
  UtxoStoreClient,
  type ClientOptions,
} from '@bsv-utxo-store/client';
import { makeTx, rootTx } from '../fixtures/txs';
import { startApi, type Api } from '../http/harness';

interface Sent {
  path: string;
  contentType: string | undefined;
  body: Buffer | string | undefined;
}

let api: Api;
const sent: Sent[] = [];

/** fetch, recording what each request carried */
const recording = (async (url: URL, init: RequestInit) => {
  const headers = init.headers as Record<string, string>;
  const body =
    init.body === undefined
      ? undefined
      : typeof init.body === 'string'
        ? init.body
        : Buffer.from(init.body as Uint8Array);
  sent.push({ path: url.pathname, contentType: headers['content-type'], body });
  return fetch(url, init);
}) as typeof fetch;

const clientWith = (options: Omit<ClientOptions, 'transport'> = {}) =>
  new UtxoStoreClient({ transport: new HttpTransport({ baseUrl: api.url, fetch: recording }), ...options });

beforeAll(async () => {
  api = await startApi();
  expect((await api.put('/v1/chain/tip/force', { height: 1000 })).status).toBe(200);
});

afterAll(async () => {
  await api?.close();
});

beforeEach(() => {
  sent.length = 0;
});

describe('binary write batches over HTTP', () => {
  test('createMany and spendMany send the frame of their body by default, and read the same results', async () => {
    const client = clientWith({ batching: false });
    const [a, b] = [rootTx(2), rootTx(1)];
    const created = await client.createMany([{ tx: a.hex }, { tx: b.hex, locked: false }]);
    expect(created.map((r) => r.ok && r.value.txid)).toEqual([a.txid, b.txid]);
    const child = makeTx({ inputs: [{ parent: a, vout: 0 }] });
    const spent = await client.spendMany([child.hex], { blockHeight: 1000 });
    expect(spent).toEqual([{ ok: true, value: { spends: [{ txid: a.txid, vout: 0, status: 'OK' }] } }]);

    expect(sent.map((s) => [s.path, s.contentType])).toEqual([
      ['/v1/batch/txs', 'application/octet-stream'],
      ['/v1/batch/spends', 'application/octet-stream'],
    ]);
    const createFrame = encodeBatchFrame('createMany', { txs: [{ tx: a.hex }, { tx: b.hex, locked: false }] })!;
    expect((sent[0].body as Buffer).equals(Buffer.from(createFrame))).toBe(true);
    const spendFrame = encodeBatchFrame('spendMany', { txs: [child.hex], blockHeight: 1000 })!;
    expect((sent[1].body as Buffer).equals(Buffer.from(spendFrame))).toBe(true);
    await client.close();
  });

  test('automatic batches of createTx and spend go binary too; reads stay JSON', async () => {
    const client = clientWith({ batching: { lingerMs: 20 } });
    const parents = [rootTx(1), rootTx(1), rootTx(1)];
    await Promise.all(parents.map((p) => client.createTx(p.hex)));
    const children = parents.map((parent) => makeTx({ inputs: [{ parent, vout: 0 }] }));
    const spent = await Promise.all(children.map((c) => client.spend(c.hex)));
    expect(spent.map((s) => s.spends[0].status)).toEqual(['OK', 'OK', 'OK']);
    expect(await client.getTx(parents[0].txid, ['fee'])).toEqual({ txid: parents[0].txid, fee: 0 });
    expect(sent.map((s) => [s.path, s.contentType])).toEqual([
      ['/v1/batch/txs', 'application/octet-stream'],
      ['/v1/batch/spends', 'application/octet-stream'],
      ['/v1/batch/get', 'application/json'],
    ]);
    await client.close();
  });

  test('binaryBatches: false sends JSON, with the same results', async () => {
    const [a, b] = [rootTx(1), rootTx(1)];
    const binary = await clientWith({ batching: false }).createMany([{ tx: a.hex }], { brief: true });
    const json = await clientWith({ batching: false, binaryBatches: false }).createMany([{ tx: b.hex }], {
      brief: true,
    });
    expect(json).toEqual(binary);
    expect(sent.map((s) => s.contentType)).toEqual(['application/octet-stream', 'application/json']);
    expect(JSON.parse(sent[1].body as string)).toEqual({ txs: [{ tx: b.hex }], brief: true });
  });

  test('a batch holding a tx that is not hex goes as JSON; the server answers that item alone', async () => {
    const client = clientWith({ batching: false });
    const a = rootTx(1);
    const results = await client.createMany([{ tx: a.hex }, { tx: 'not hex' }]);
    expect(results[0]).toMatchObject({ ok: true, value: { txid: a.txid } });
    expect(results[1].ok).toBe(false);
    expect(!results[1].ok && results[1].error).toBeInstanceOf(InvalidArgumentError);
    expect(sent.map((s) => s.contentType)).toEqual(['application/json']);
  });
});

describe('binary write batches over SigV4', () => {
  test('the frame is the signed body: its SHA-256 in x-amz-content-sha256, content-type signed', async () => {
    const seen: { headers: Record<string, string>; body: unknown }[] = [];
    const client = awsClient({
      apiUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      batching: false,
    });
    (client.transport as unknown as { fetchFn: typeof fetch }).fetchFn = (async (_url: URL, init: RequestInit) => {
      seen.push({ headers: init.headers as Record<string, string>, body: init.body });
      return new Response(JSON.stringify({ results: [{ status: 200 }] }), { status: 200 });
    }) as unknown as typeof fetch;
    const tx = makeTx({ inputs: [{ parent: rootTx(1), vout: 0 }] });
    expect(await client.spendMany([tx.hex], { brief: true })).toEqual([{ ok: true, value: undefined }]);
    const frame = Buffer.from(encodeBatchFrame('spendMany', { txs: [tx.hex], brief: true })!);
    const { headers, body } = seen[0];
    expect(Buffer.from(body as Uint8Array).equals(frame)).toBe(true);
    expect(headers['content-type']).toBe('application/octet-stream');
    expect(headers['x-amz-content-sha256']).toBe(createHash('sha256').update(frame).digest('hex'));
    expect(headers.authorization).toMatch(/SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date,/);
  });
});
