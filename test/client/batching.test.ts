/**
 * Automatic batching: the generic batcher (linger window, batch size, per-item outcomes, whole-batch failure,
 * bounded in-flight batches, bounded queue with backpressure) and the client's single calls batched into the
 * /v1/batch/* routes, served by a fake batch transport.
 */
import fc from 'fast-check';
import {
  Batcher,
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  QueueFullError,
  UtxoStoreClient,
} from '@bsv-utxo-store/client';
import { fakeSpend, FakeBatchServer } from './fake-batch-server';

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe('Batcher', () => {
  test('calls within the linger window go out as one batch; each caller gets its own outcome', async () => {
    const batches: number[][] = [];
    const b = new Batcher<number, number>(
      async (items) => {
        batches.push(items);
        return items.map((n) =>
          n % 5 === 0 ? { ok: false, error: new Error(`no ${n}`) } : { ok: true, value: n * 2 },
        );
      },
      { lingerMs: 5, maxBatchSize: 100 },
    );
    const calls = Array.from({ length: 12 }, (_, i) =>
      b.submit(i + 1).then(
        (v) => v,
        (e: Error) => e.message,
      ),
    );
    expect(await Promise.all(calls)).toEqual([2, 4, 6, 8, 'no 5', 12, 14, 16, 18, 'no 10', 22, 24]);
    expect(batches).toEqual([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]]);
  });

  test('a full batch goes out at once, without waiting for the linger window', async () => {
    const sizes: number[] = [];
    const b = new Batcher<number, number>(
      async (items) => {
        sizes.push(items.length);
        return items.map((value) => ({ ok: true, value }));
      },
      { lingerMs: 10_000, maxBatchSize: 4 },
    );
    const calls = Array.from({ length: 8 }, (_, i) => b.submit(i));
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(sizes).toEqual([4, 4]);
  });

  test('a batch that fails as a whole fails each of its calls; a short answer too', async () => {
    const b = new Batcher<number, number>(async () => Promise.reject(new Error('network down')), { lingerMs: 1 });
    const all = await Promise.allSettled([b.submit(1), b.submit(2)]);
    expect(all.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'ok'))).toEqual([
      'network down',
      'network down',
    ]);
    const short = new Batcher<number, number>(async () => [{ ok: true, value: 1 }], { lingerMs: 1 });
    const res = await Promise.allSettled([short.submit(1), short.submit(2)]);
    expect(res.every((r) => r.status === 'rejected')).toBe(true);
  });

  test('at most maxInFlight batches in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const b = new Batcher<number, number>(
      async (items) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await tick(5);
        inFlight--;
        return items.map((value) => ({ ok: true, value }));
      },
      { maxBatchSize: 10, maxInFlight: 3, lingerMs: 1 },
    );
    const out = await Promise.all(Array.from({ length: 200 }, (_, i) => b.submit(i)));
    expect(out).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(peak).toBe(3);
    expect(b.stats).toMatchObject({ batches: 20, items: 200, peakInFlight: 3 });
  });

  test('backpressure: beyond maxQueued a call waits for room (or with whenFull reject, fails at once)', async () => {
    const release: (() => void)[] = [];
    const send = async (items: number[]) => {
      await new Promise<void>((r) => release.push(r));
      return items.map((value) => ({ ok: true as const, value }));
    };
    const b = new Batcher<number, number>(send, { maxBatchSize: 2, maxInFlight: 1, maxQueued: 4, lingerMs: 1 });
    const admitted: number[] = [];
    const calls = Array.from({ length: 10 }, (_, i) => b.submit(i).then((v) => (admitted.push(v), v)));
    await tick(10);
    // 1 batch of 2 in flight, 4 queued; the other 4 callers wait
    expect(b.inFlightBatches).toBe(1);
    expect(b.queued).toBe(4);
    expect(b.stats.peakQueued).toBeLessThanOrEqual(4);
    while (admitted.length < 10) {
      release.shift()?.();
      await tick(5);
      expect(b.queued).toBeLessThanOrEqual(4);
    }
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

    const rejecting = new Batcher<number, number>(send, {
      maxBatchSize: 2,
      maxInFlight: 1,
      maxQueued: 2,
      lingerMs: 1,
      whenFull: 'reject',
    });
    const first = [rejecting.submit(1), rejecting.submit(2)];
    await tick(5);
    const more = [rejecting.submit(3), rejecting.submit(4)];
    await expect(rejecting.submit(5)).rejects.toBeInstanceOf(QueueFullError);
    while (release.length > 0 || rejecting.inFlightBatches > 0) {
      release.shift()?.();
      await tick(5);
    }
    expect(await Promise.all([...first, ...more])).toEqual([1, 2, 3, 4]);
  });

  test('property: every call gets exactly its own item back, whatever the sizes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 4 }),
        async (n, size, inFlight) => {
          const b = new Batcher<number, string>(
            async (items) => {
              expect(items.length).toBeLessThanOrEqual(size);
              return items.map((i) => ({ ok: true, value: `v${i}` }));
            },
            { maxBatchSize: size, maxInFlight: inFlight, lingerMs: 0, maxQueued: size * 2 },
          );
          const out = await Promise.all(Array.from({ length: n }, (_, i) => b.submit(i)));
          expect(out).toEqual(Array.from({ length: n }, (_, i) => `v${i}`));
          await b.drain();
          expect(b.stats.items).toBe(n);
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('client auto-batching over the batch routes (fake batch transport)', () => {
  test('250 concurrent spend() calls are 3 requests to /v1/batch/spends; each caller gets its own outcome', async () => {
    const server = new FakeBatchServer();
    const client = new UtxoStoreClient({ transport: server, batching: { lingerMs: 2, maxBatchSize: 100 } });
    server.spent.set('p7:0', 'other');
    const calls = Array.from({ length: 250 }, (_, i) => client.spend(fakeSpend(`c${i}`, `p${i}`, 0)));
    const settled = await Promise.allSettled(calls);
    expect(server.requests.map((r) => [r.path, (r.body as { txs: string[] }).txs.length])).toEqual([
      ['/v1/batch/spends', 100],
      ['/v1/batch/spends', 100],
      ['/v1/batch/spends', 50],
    ]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: { spends: [{ txid: 'p0', vout: 0, status: 'OK' }] } });
    const failed = settled[7] as PromiseRejectedResult;
    expect(failed.reason).toBeInstanceOf(ConflictError);
    expect(failed.reason).toMatchObject({ code: 'SPENT', status: 409, txid: 'p7', spendingTxid: 'other' });
    expect(settled.filter((s) => s.status === 'rejected')).toHaveLength(1);
    await client.close();
  });

  test('spend options split batches; createTx, getTx and getUtxo batch into their routes', async () => {
    const server = new FakeBatchServer();
    const client = new UtxoStoreClient({ transport: server, batching: true });
    const [a, b, created, bad, got, missing, utxo] = await Promise.allSettled([
      client.spend(fakeSpend('c1', 'p1', 0)),
      client.spend(fakeSpend('c2', 'p2', 0), { ignoreLocked: true }),
      client.createTx('aa'),
      client.createTx('bad'),
      client.getTx('abc', ['fee']),
      client.getTx('missing1', ['fee']),
      client.getUtxo('p1', 0),
    ]);
    expect([a.status, b.status]).toEqual(['fulfilled', 'fulfilled']);
    const spends = server.requests.filter((r) => r.path === '/v1/batch/spends').map((r) => r.body);
    expect(spends).toEqual(expect.arrayContaining([{ txs: ['c1:p1:0'] }, { txs: ['c2:p2:0'], ignoreLocked: true }]));
    expect(created).toEqual({ status: 'fulfilled', value: expect.objectContaining({ txid: 'aa' }) });
    expect((bad as PromiseRejectedResult).reason).toBeInstanceOf(InvalidArgumentError);
    expect(got).toEqual({ status: 'fulfilled', value: { txid: 'abc', fee: 3 } });
    expect((missing as PromiseRejectedResult).reason).toBeInstanceOf(NotFoundError);
    expect((missing as PromiseRejectedResult).reason).toMatchObject({ status: 404, txid: 'missing1' });
    expect(utxo).toEqual({ status: 'fulfilled', value: { status: 'SPENT', spendingTxid: 'c1', vin: 0 } });
    expect(server.requests.find((r) => r.path === '/v1/batch/get')?.body).toEqual({
      txids: ['abc', 'missing1'],
      fields: ['fee'],
    });
    expect(server.requests.find((r) => r.path === '/v1/batch/txs')?.body).toEqual({
      txs: [{ tx: 'aa' }, { tx: 'bad' }],
    });
  });

  test('explicit batch calls return per-item results, not exceptions', async () => {
    const client = new UtxoStoreClient({ transport: new FakeBatchServer() });
    const results = await client.createMany([{ tx: 'aa' }, { tx: 'bad' }]);
    expect(results[0]).toEqual({ ok: true, value: expect.objectContaining({ txid: 'aa' }) });
    expect(results[1].ok).toBe(false);
    expect(!results[1].ok && results[1].error).toBeInstanceOf(InvalidArgumentError);
  });

  test('a whole batch failing with 503 is retried (idempotent spends), then each call gets the outcome', async () => {
    const server = new FakeBatchServer({
      override: (_r, n) =>
        n <= 2 ? { status: 503, body: { error: { code: 'STORAGE_ERROR', message: 'engine timeout' } } } : undefined,
    });
    const client = new UtxoStoreClient({ transport: server, batching: true, retry: { baseMs: 1 } });
    const out = await Promise.all([client.spend(fakeSpend('c1', 'p1', 0)), client.spend(fakeSpend('c2', 'p2', 0))]);
    expect(out.map((o) => o.spends[0].status)).toEqual(['OK', 'OK']);
    expect(server.requests).toHaveLength(3);
  });
});
