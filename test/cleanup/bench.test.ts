import { benchCleanup } from '../../bench/sections/cleanup';

test('benchCleanup runs on the embedded engine, deletes every parent with 1 and with 3 children and reports rates', async () => {
  const rows = await benchCleanup({ parents: 20, batchSize: 7 });
  expect(rows.map((r) => [r.engine, r.childrenPerParent, r.examined, r.deleted])).toEqual([
    ['embedded', 1, 20, 20],
    ['embedded', 3, 20, 20],
  ]);
  for (const r of rows) expect(r.deletedPerSec).toBeGreaterThan(0);
});
