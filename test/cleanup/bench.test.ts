import { benchCleanup } from '../../bench/sections/cleanup';

test('benchCleanup deletes every parent with 1 and with 3 children and reports rates', async () => {
  const rows = await benchCleanup({ parents: 20, batchSize: 7 });
  expect(rows.map((r) => [r.childrenPerParent, r.examined, r.deleted])).toEqual([
    [1, 20, 20],
    [3, 20, 20],
  ]);
  for (const r of rows) expect(r.deletedPerSec).toBeGreaterThan(0);
});
