/**
 * Properties of the module over random records and operation sequences (fast-check).
 */
import fc from 'fast-check';
import { encodeSpendItems } from '../../lib/domain/udf';
import type { Bins } from '../../lib/engine/port';
import {
  FROZEN,
  H,
  R,
  frozenSlot,
  hash32,
  item,
  sd,
  spendArgs,
  spentSlot,
  txid,
  useEngine,
  type SlotSpec,
} from './helpers';

const SPENDERS = [hash32('s0'), hash32('s1'), hash32('s2')];

/** A random slot: none, unspent, spent by one of SPENDERS, or frozen. */
const slotArb = (i: number): fc.Arbitrary<SlotSpec> =>
  fc.oneof(
    fc.constant(null),
    fc.constant(hash32(`u${i}`)),
    fc
      .tuple(fc.integer({ min: 0, max: SPENDERS.length - 1 }), fc.nat(3))
      .map(([s, vin]) => spentSlot(hash32(`u${i}`), sd(SPENDERS[s], vin))),
    fc.constant(frozenSlot(hash32(`u${i}`))),
  );

const slotsArb = fc
  .integer({ min: 1, max: 6 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => slotArb(i))));

function countSpent(bins: Bins): number {
  return (bins.utxos as (Buffer | null)[]).filter(
    (s) => s !== null && s.length === 68 && !s.subarray(32).equals(FROZEN),
  ).length;
}

describe('properties', () => {
  const h = useEngine();

  test('spend then unspend with the same spender restores the slots and counters', async () => {
    await fc.assert(
      fc.asyncProperty(slotsArb, fc.array(fc.nat(5), { maxLength: 6 }), fc.nat(3), async (slots, offsets, vin) => {
        const key = await h().put({ utxos: slots, blockIDs: [1] });
        await h().call(key, 'rerunDah', H, R);
        const before = await h().bins(key);
        const spender = sd(txid(), vin);
        const spends = offsets.map((o) => item(o, hash32(`u${o}`), spender));
        const res = await h().call(key, 'spendMulti', ...spendArgs(spends));
        // undo every item that succeeded (the store's rollback)
        const failed = new Set(Object.keys((res.errors as object | undefined) ?? {}).map(Number));
        for (const [i, o] of offsets.entries()) {
          if (!failed.has(i)) await h().call(key, 'unspend', o, hash32(`u${o}`), spender, H, R);
        }
        const after = await h().bins(key);
        expect(after.utxos).toEqual(before.utxos);
        expect(after.spentUtxos).toBe(before.spentUtxos);
        expect(after.recordUtxos).toBe(before.recordUtxos);
        expect(after.deleteAtHeight).toBe(before.deleteAtHeight);
      }),
      { numRuns: 60 },
    );
  });

  test('spentUtxos always equals the number of spent slots; DAH iff every stored slot is spent', async () => {
    const op = fc.record({
      kind: fc.constantFrom('spend', 'unspend', 'freeze', 'unfreeze'),
      offset: fc.nat(5),
      spender: fc.integer({ min: 0, max: SPENDERS.length - 1 }),
    });
    await fc.assert(
      fc.asyncProperty(slotsArb, fc.array(op, { maxLength: 12 }), async (slots, ops) => {
        const key = await h().put({ utxos: slots, blockIDs: [1] });
        await h().call(key, 'rerunDah', H, R);
        for (const o of ops) {
          const hash = hash32(`u${o.offset}`);
          const spender = sd(SPENDERS[o.spender], 0);
          if (o.kind === 'spend') await h().call(key, 'spendMulti', ...spendArgs([item(o.offset, hash, spender)]));
          else if (o.kind === 'unspend') await h().call(key, 'unspend', o.offset, hash, spender, H, R);
          else await h().call(key, o.kind, o.offset, hash, H, R);
          const bins = await h().bins(key);
          expect(bins.spentUtxos).toBe(countSpent(bins));
          const stored = (bins.utxos as (Buffer | null)[]).filter((s) => s !== null).length;
          expect(bins.recordUtxos).toBe(stored);
          expect(bins.deleteAtHeight).toBe(countSpent(bins) === stored ? H + R : undefined);
        }
      }),
      { numRuns: 40 },
    );
  });

  test("spendMulti's two forms of spends (bytes of items, list of maps) answer and write the same", async () => {
    const itemArb = fc.record({
      offset: fc.nat(6),
      hashOf: fc.nat(6),
      spender: fc.integer({ min: 0, max: SPENDERS.length - 1 }),
      vin: fc.nat(2),
      frozen: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(slotsArb, fc.array(itemArb, { maxLength: 6 }), async (slots, specs) => {
        const items = specs.map((x) => ({
          offset: x.offset,
          utxoHash: hash32(`u${x.hashOf}`),
          spendingData: x.frozen && x.vin === 2 ? FROZEN : sd(SPENDERS[x.spender], x.vin),
        }));
        const asList = await h().put({ utxos: slots, blockIDs: [1] });
        const asBytes = await h().put({ utxos: slots, blockIDs: [1] });
        const listed = await h().call(
          asList,
          'spendMulti',
          ...spendArgs(items.map((i) => item(i.offset, i.utxoHash, i.spendingData))),
        );
        const framed = await h().call(asBytes, 'spendMulti', encodeSpendItems(items), false, false, H, R);
        expect(framed).toEqual(listed);
        expect(await h().bins(asBytes)).toEqual(await h().bins(asList));
      }),
      { numRuns: 80 },
    );
  });
});
