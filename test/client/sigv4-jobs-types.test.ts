/**
 * SigV4 signing against AWS's published known-answer vector (get-vanilla of the Signature Version 4 test suite),
 * the signed requests the SigV4 transport sends, block-size jobs (a million txids split under the payload limit with
 * bounded concurrency and progress; a too-large answer split in halves), and the client's operations kept in step
 * with the route table.
 */
import {
  awsClient,
  chunkItems,
  JobError,
  OPERATIONS,
  RequestSigner,
  StorageError,
  TransportError,
  UtxoStoreClient,
  type OperationRequest,
  type OperationResponse,
} from '@bsv-utxo-store/client';
import { ROUTE_TABLE as ROUTES } from '../../lib/http/route-table';
import { MAX_BODY_BYTES } from '../../lib/http/payload-limits';
import { FakeBatchServer } from './fake-batch-server';

// AWS SigV4 test suite credentials and time (docs.aws.amazon.com, "Signature Version 4 test suite")
const SUITE = {
  region: 'us-east-1',
  service: 'service',
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
  now: () => new Date('2015-08-30T12:36:00Z'),
};

describe('SigV4', () => {
  test('get-vanilla: the Authorization header of the published vector', async () => {
    const signer = new RequestSigner({ ...SUITE, signBodyHash: false });
    const signed = await signer.sign({ method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {} });
    expect(signed.headers['x-amz-date']).toBe('20150830T123600Z');
    expect(signed.headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ' +
        'SignedHeaders=host;x-amz-date, ' +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
  });

  test('the transport sends each request signed for execute-api, with the session token and body hash', async () => {
    const seen: { url: string; headers: Record<string, string>; body?: string }[] = [];
    const fakeFetch = (async (url: URL, init: RequestInit) => {
      seen.push({ url: url.toString(), headers: init.headers as Record<string, string>, body: init.body as string });
      return new Response(JSON.stringify({ height: 7 }), { status: 200 });
    }) as unknown as typeof fetch;
    const client = awsClient({
      apiUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod',
      region: 'eu-west-1',
      credentials: { ...SUITE.credentials, sessionToken: 'TOKEN' },
      now: SUITE.now,
    });
    // the fetch of the transport is swapped for the fake (the constructor option of HttpTransport)
    (client.transport as unknown as { fetchFn: typeof fetch }).fetchFn = fakeFetch;
    expect(await client.setChainTip(7)).toBe(7);
    expect(seen).toHaveLength(1);
    const { url, headers, body } = seen[0];
    expect(url).toBe('https://abc123.execute-api.eu-west-1.amazonaws.com/prod/v1/chain/tip');
    expect(body).toBe('{"height":7}');
    expect(headers['x-amz-security-token']).toBe('TOKEN');
    expect(headers['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20150830\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
  });

  test('no credentials: a TransportError that was not sent (so safe to retry)', async () => {
    const client = awsClient({
      apiUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod',
      region: 'eu-west-1',
      credentials: async () => {
        throw Object.assign(new Error('Could not load credentials from any providers'), {
          name: 'CredentialsProviderError',
        });
      },
      retry: { attempts: 1 },
    });
    const err = await client.getChainTip().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).sent).toBe(false);
  });
});

describe('block-size jobs', () => {
  test('chunkItems keeps each body under the byte limit and the item limit', () => {
    const txids = Array.from({ length: 5000 }, (_, i) => i.toString(16).padStart(64, '0'));
    const envelope = JSON.stringify({ txids: [], blockId: 1, blockHeight: 2, subtreeIdx: 3 });
    const chunks = chunkItems(txids, { maxItems: 10_000, maxBytes: 100_000, envelopeBytes: envelope.length });
    for (const c of chunks) {
      const body = JSON.stringify({ txids: c, blockId: 1, blockHeight: 2, subtreeIdx: 3 });
      expect(body.length).toBeLessThanOrEqual(100_000);
    }
    expect(chunks.flat()).toEqual(txids);
    expect(chunks.length).toBe(Math.ceil((5000 * 67) / (100_000 - envelope.length)));
  });

  test('setMinedMany of a million txids: requests under 6 MB, bounded concurrency, progress to the end', async () => {
    // the answers are left empty: building a million-key answer would measure the fake, not the splitting
    const server = new FakeBatchServer({ delayMs: 1, override: () => ({ status: 200, body: { blockIds: {} } }) });
    const client = new UtxoStoreClient({ transport: server });
    const txids = Array.from({ length: 1_000_000 }, (_, i) => i.toString(16).padStart(64, '0'));
    const progress: number[] = [];
    const result = await client.setMinedMany(
      txids,
      { blockId: 9, blockHeight: 800_000, subtreeIdx: 0 },
      { concurrency: 3, maxItemsPerRequest: 200_000, onProgress: (p) => progress.push(p.done) },
    );
    const sizes = server.requests.map((r) => Buffer.byteLength(JSON.stringify(r.body)));
    const sent = server.requests.flatMap((r) => (r.body as { txids: string[] }).txids);
    expect(sent.length === txids.length && sent.every((t, i) => t === txids[i])).toBe(true);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    // 6,225,920-byte bodies hold about 92,900 txids: 11 requests, not the 5 the item limit alone would give
    expect(server.requests.length).toBe(Math.ceil(1_000_000 / Math.floor((MAX_BODY_BYTES - 1024 - 80) / 67)));
    expect(server.peakInFlight).toBeLessThanOrEqual(3);
    expect(progress).toHaveLength(server.requests.length);
    expect(progress[progress.length - 1]).toBe(1_000_000);
    expect(result.size).toBe(0);
  }, 120_000);

  test('a failed request stops the job with a JobError saying how far it got', async () => {
    const server = new FakeBatchServer({
      override: (_r, n) =>
        n === 2 ? { status: 404, body: { error: { code: 'TX_NOT_FOUND', message: 'missing' } } } : undefined,
    });
    const client = new UtxoStoreClient({ transport: server });
    const txids = Array.from({ length: 30 }, (_, i) => `t${i}`);
    const err = await client
      .setMinedMany(txids, { blockId: 1, blockHeight: 1, subtreeIdx: 0 }, { maxItemsPerRequest: 10, concurrency: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobError);
    expect((err as JobError).progress).toEqual({ done: 10, total: 30, requests: 1 });
    expect((err as JobError).failedItems).toEqual(txids.slice(10, 20));
    expect(server.requests).toHaveLength(2);
  });

  test('getMany: per-txid outcomes in order; an answer over 6 MB is split in halves and sent again', async () => {
    const server = new FakeBatchServer({
      override: (r) =>
        r.path === '/v1/batch/get' && (r.body as { txids: string[] }).txids.length > 2
          ? { status: 413, body: { error: { code: 'RESPONSE_TOO_LARGE', message: 'over 6 MB' } } }
          : undefined,
    });
    const client = new UtxoStoreClient({ transport: server });
    const txids = ['a', 'bb', 'missing1', 'cccc', 'ddddd'];
    const out = await client.getMany(txids, ['fee'], { maxItemsPerRequest: 5 });
    expect(out.map((r) => (r.ok ? r.value.fee : (r.error as Error).name))).toEqual([1, 2, 'NotFoundError', 4, 5]);
    expect(server.requests.map((r) => (r.body as { txids: string[] }).txids.length)).toEqual([5, 3, 2, 1, 2]);
  });

  test('getMany: a failure other than a too-large answer fails the job', async () => {
    const server = new FakeBatchServer({
      override: () => ({ status: 503, body: { error: { code: 'STORAGE_ERROR', message: 'down' } } }),
    });
    const client = new UtxoStoreClient({ transport: server, retry: { attempts: 2, baseMs: 1 } });
    const err = await client.getMany(['a'], undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobError);
    expect((err as JobError).failure).toBeInstanceOf(StorageError);
  });
});

describe('operations and the route table', () => {
  test('every route of the table is an operation with the same method, path and function', () => {
    expect(Object.keys(OPERATIONS).sort()).toEqual(ROUTES.map((r) => r.operationId).sort());
    for (const r of ROUTES) {
      const op = OPERATIONS[r.operationId];
      expect({ id: r.operationId, method: op.method, path: op.path, fn: op.fn }).toEqual({
        id: r.operationId,
        method: r.method,
        path: r.path,
        fn: r.fn,
      });
    }
  });

  test('request and response types come from the schemas (checked by npm run typecheck)', () => {
    const create: OperationRequest<'createTx'> = { body: { tx: '00', isCoinbase: true } };
    const utxo: OperationRequest<'getUtxo'> = { params: { txid: 'aa', vout: '0' }, query: { utxoHash: 'bb' } };
    const tip: OperationResponse<'getChainTip'> = { height: 1 };
    // @ts-expect-error the body of createTx is required
    const noBody: OperationRequest<'createTx'> = {};
    // @ts-expect-error isCoinbase is a boolean in the schema
    const wrongType: OperationRequest<'createTx'> = { body: { tx: '00', isCoinbase: 'yes' } };
    // @ts-expect-error a field the schema does not have
    const unknownField: OperationResponse<'getChainTip'> = { height: 1, extra: true };
    expect([create, utxo, tip, noBody, wrongType, unknownField]).toHaveLength(6);
  });
});
