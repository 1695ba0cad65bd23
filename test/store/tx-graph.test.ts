/**
 * mapLimited: the bounded fan-out of blob reads (external txs) in the graph walks and the unmined iteration, and of
 * cleanup's candidate deletes.
 */
import fc from 'fast-check';
import { mapLimited } from '../../lib/domain/concurrency';

test('results in order, never more than the limit in flight (property)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.nat(5), { maxLength: 60 }), fc.integer({ min: 1, max: 8 }), async (delays, limit) => {
      let inFlight = 0;
      let peak = 0;
      const out = await mapLimited(delays, limit, async (d, i) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, d));
        inFlight--;
        return i * 2;
      });
      expect(out).toEqual(delays.map((_, i) => i * 2));
      expect(peak).toBeLessThanOrEqual(limit);
    }),
    { numRuns: 40 },
  );
});

test('a failing item fails the whole call', async () => {
  await expect(
    mapLimited([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('boom');
      return n;
    }),
  ).rejects.toThrow('boom');
});

test('after a failure no further item starts, and the running ones settle before the failure is rethrown', async () => {
  const started: number[] = [];
  let running = 0;
  await expect(
    mapLimited([1, 2, 3, 4, 5, 6], 2, async (n) => {
      started.push(n);
      running++;
      await new Promise((r) => setTimeout(r, n === 1 ? 1 : 20));
      running--;
      if (n === 1) throw new Error('boom');
      return n;
    }),
  ).rejects.toThrow('boom');
  expect(running).toBe(0);
  expect(started).toEqual([1, 2]);
});
