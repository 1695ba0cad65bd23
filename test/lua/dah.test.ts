/**
 * The DAH rule (docs/udf.md) over its truth table, evaluated with rerunDah (the rule alone) on records built
 * per docs/records.md. R = retention, H = height.
 */
import type { Bins } from '../../lib/engine/port';
import { H, R, hash32, pageKey, sd, spentSlot, txid, useEngine, type RecordOptions } from './helpers';

const child = txid();
const spent = (n: number) => Array.from({ length: n }, (_, i) => spentSlot(hash32(`u${i}`), sd(child, i)));
const SPENT = spent(2);
const HALF = [SPENT[0], hash32('u1')];

interface Row {
  name: string;
  record: RecordOptions;
  retention?: number;
  /** expected deleteAtHeight after the rule (undefined = absent) */
  dah: number | undefined;
  signal?: string;
  childCount?: number;
  lastSpentState?: string;
}

const EXISTING = H + R + 50;

const masterRows: Row[] = [
  { name: 'fully spent, mined on the longest chain -> DAH = H + R', record: { utxos: SPENT }, dah: H + R },
  {
    name: 'fully spent, mined, external -> DAHSET with childCount',
    record: { utxos: SPENT, external: true },
    dah: H + R,
    signal: 'DAHSET',
    childCount: 0,
  },
  {
    name: 'an existing later DAH is kept (max), no signal',
    record: { utxos: SPENT, external: true, deleteAtHeight: EXISTING },
    dah: EXISTING,
  },
  {
    name: 'an existing earlier DAH is raised to H + R',
    record: { utxos: SPENT, external: true, deleteAtHeight: H },
    dah: H + R,
    signal: 'DAHSET',
    childCount: 0,
  },
  { name: 'not all spent -> no DAH', record: { utxos: HALF }, dah: undefined },
  {
    name: 'not all spent, DAH present, external -> removed, DAHUNSET',
    record: { utxos: HALF, external: true, deleteAtHeight: H, totalExtraRecs: 2, spentExtraRecs: 2 },
    dah: undefined,
    signal: 'DAHUNSET',
    childCount: 2,
  },
  {
    name: 'not all spent, DAH present, not external -> removed, no signal',
    record: { utxos: HALF, deleteAtHeight: H },
    dah: undefined,
  },
  { name: 'unmined (no blocks) -> no DAH', record: { utxos: SPENT, blockIDs: [] }, dah: undefined },
  {
    name: 'mined only on a fork (blocks, unminedSince) -> no DAH',
    record: { utxos: SPENT, blockIDs: [3], unminedSince: 900, deleteAtHeight: H },
    dah: undefined,
  },
  { name: 'locked -> no DAH', record: { utxos: SPENT, locked: true, deleteAtHeight: H }, dah: undefined },
  { name: 'creating -> no DAH', record: { utxos: SPENT, creating: true }, dah: undefined },
  {
    name: 'pagination records not all spent (spentExtraRecs < totalExtraRecs) -> no DAH',
    record: { utxos: SPENT, totalExtraRecs: 2, spentExtraRecs: 1, external: true },
    dah: undefined,
  },
  {
    name: 'all pagination records spent -> DAH, DAHSET with childCount = totalExtraRecs',
    record: { utxos: SPENT, totalExtraRecs: 2, spentExtraRecs: 2, external: true },
    dah: H + R,
    signal: 'DAHSET',
    childCount: 2,
  },
  {
    name: 'a record without stored outputs (recordUtxos 0), mined -> DAH',
    record: { utxos: [null, null] },
    dah: H + R,
  },
  {
    name: 'a reassigned output keeps it from counting as fully spent',
    record: { utxos: SPENT, extra: { reassignments: [{ offset: 0, blockHeight: 1 }] }, deleteAtHeight: H },
    dah: undefined,
  },
  {
    name: 'conflicting (unspent, unmined) -> DAH = H + R, DAHSET when external',
    record: { utxos: HALF, blockIDs: [], conflicting: true, external: true, totalExtraRecs: 1 },
    dah: H + R,
    signal: 'DAHSET',
    childCount: 1,
  },
  {
    name: 'conflicting, not external -> DAH, no signal',
    record: { utxos: HALF, blockIDs: [], conflicting: true },
    dah: H + R,
  },
  {
    name: 'conflicting with a DAH -> kept as is',
    record: { utxos: HALF, conflicting: true, external: true, deleteAtHeight: H - 3 },
    dah: H - 3,
  },
  {
    name: 'conflicting and locked -> still DAH (conflicting wins)',
    record: { utxos: HALF, conflicting: true, locked: true },
    dah: H + R,
  },
  {
    name: 'preserved -> no change (no DAH added)',
    record: { utxos: SPENT, external: true, preserveUntil: H + 100 },
    dah: undefined,
  },
  {
    name: 'preserved -> no change (DAH not removed)',
    record: { utxos: HALF, external: true, preserveUntil: H + 100, deleteAtHeight: H },
    dah: H,
  },
  {
    name: 'preserved and conflicting -> no change',
    record: { utxos: HALF, conflicting: true, preserveUntil: H + 100 },
    dah: undefined,
  },
  { name: 'R = 0 disables DAH (deletable)', record: { utxos: SPENT, external: true }, retention: 0, dah: undefined },
  {
    name: 'R = 0 disables DAH (conflicting)',
    record: { utxos: HALF, conflicting: true },
    retention: 0,
    dah: undefined,
  },
  {
    name: 'R = 0 leaves an existing DAH alone',
    record: { utxos: HALF, deleteAtHeight: H },
    retention: 0,
    dah: H,
  },
];

const pageRows: Row[] = [
  {
    name: 'page becomes fully spent -> ALLSPENT, lastSpentState, never its own DAH',
    record: { master: false, utxos: SPENT },
    dah: undefined,
    signal: 'ALLSPENT',
    lastSpentState: 'ALLSPENT',
  },
  {
    name: 'page already ALLSPENT -> no signal',
    record: { master: false, utxos: SPENT, extra: { lastSpentState: 'ALLSPENT' } },
    dah: undefined,
    lastSpentState: 'ALLSPENT',
  },
  {
    name: 'page no longer fully spent -> NOTALLSPENT',
    record: { master: false, utxos: HALF, extra: { lastSpentState: 'ALLSPENT' } },
    dah: undefined,
    signal: 'NOTALLSPENT',
    lastSpentState: 'NOTALLSPENT',
  },
  {
    name: 'page not spent, no state yet -> no signal (NOTALLSPENT is the initial state)',
    record: { master: false, utxos: HALF },
    dah: undefined,
    lastSpentState: 'NOTALLSPENT',
  },
  {
    name: 'page without stored outputs starts ALLSPENT -> no signal',
    record: { master: false, utxos: [null] },
    dah: undefined,
    lastSpentState: 'ALLSPENT',
  },
  {
    name: 'page with a reassignment is never fully spent',
    record: { master: false, utxos: SPENT, extra: { reassignments: [{ offset: 0 }], lastSpentState: 'ALLSPENT' } },
    dah: undefined,
    signal: 'NOTALLSPENT',
    lastSpentState: 'NOTALLSPENT',
  },
  {
    name: 'page keeps the DAH the reconciler gave it (the rule never touches it)',
    record: { master: false, utxos: HALF, deleteAtHeight: H + 7, extra: { lastSpentState: 'ALLSPENT' } },
    dah: H + 7,
    signal: 'NOTALLSPENT',
    lastSpentState: 'NOTALLSPENT',
  },
  {
    name: 'page, external bin ignored (pages signal only spent state)',
    record: { master: false, utxos: SPENT, extra: { external: true } },
    dah: undefined,
    signal: 'ALLSPENT',
    lastSpentState: 'ALLSPENT',
  },
  {
    name: 'conflicting page -> DAH = H + R (as the store creates conflicting pages)',
    record: { master: false, utxos: HALF, conflicting: true },
    dah: H + R,
  },
  {
    name: 'preserved page -> no change, no signal',
    record: { master: false, utxos: SPENT, preserveUntil: H + 100 },
    dah: undefined,
  },
  {
    name: 'R = 0: page signals nothing',
    record: { master: false, utxos: SPENT },
    retention: 0,
    dah: undefined,
  },
];

describe('DAH rule truth table', () => {
  const h = useEngine();

  async function check(row: Row, isPage: boolean): Promise<Bins> {
    const key = isPage ? pageKey(txid(), 1) : txid();
    await h().put(row.record, key);
    const res = await h().call(key, 'rerunDah', H, row.retention ?? R);
    const expected: Record<string, unknown> = { status: 'OK' };
    if (row.signal) expected.signal = row.signal;
    if (row.childCount !== undefined) expected.childCount = row.childCount;
    expect(res).toEqual(expected);
    const bins = await h().bins(key);
    expect(bins.deleteAtHeight).toBe(row.dah);
    return bins;
  }

  test.each(masterRows.map((r) => [r.name, r] as const))('master: %s', async (_name, row) => {
    await check(row, false);
  });

  test.each(pageRows.map((r) => [r.name, r] as const))('pagination: %s', async (_name, row) => {
    const bins = await check(row, true);
    if (row.lastSpentState) expect(bins.lastSpentState).toBe(row.lastSpentState);
  });

  test('the rule runs after a state change: spend, unspend, setMined, setLocked, clearCreating', async () => {
    const key = await h().put({ utxos: [spentSlot(hash32('u0'), sd(child, 0)), hash32('u1')], blockIDs: [] });
    const spendLast = () =>
      h().call(
        key,
        'spendMulti',
        [{ offset: 1, utxoHash: hash32('u1'), spendingData: sd(child, 1) }],
        false,
        false,
        H,
        R,
      );
    await spendLast();
    expect((await h().bins(key)).deleteAtHeight).toBeUndefined(); // unmined
    await h().call(key, 'setMined', 1, H, 0, H, R, true, false);
    expect((await h().bins(key)).deleteAtHeight).toBe(H + R);
    await h().call(key, 'setLocked', true, H, R);
    expect((await h().bins(key)).deleteAtHeight).toBeUndefined();
    await h().call(key, 'setLocked', false, H + 1, R);
    expect((await h().bins(key)).deleteAtHeight).toBe(H + 1 + R);
    await h().call(key, 'unspend', 1, hash32('u1'), sd(child, 1), H + 2, R);
    expect((await h().bins(key)).deleteAtHeight).toBeUndefined();
    await spendLast();
    expect((await h().bins(key)).deleteAtHeight).toBe(H + R);
  });
});
