/**
 * mapLimited: the bounded fan-out of blob reads (external txs) in the graph walks and the unmined iteration.
 */
import fc from 'fast-check';
import { mapLimited } from '../../lib/store/tx-graph';

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
