/**
 * A deleted record is a tombstone (the engines' remove): every function of the module answers on it exactly as on a
 * missing record and writes nothing to it. On Aerospike the UDF sees the tombstone as an existing record, so this
 * is the module's own check (isLive), run here by the embedded engine, which passes tombstones on the same way.
 */
import { UDF_FUNCTIONS, type UdfFunction } from '../../lib/domain/udf';
import type { BinValue } from '../../lib/engine/port';
import { H, R, hash32, item, sd, spendArgs, txid, useEngine } from './helpers';

const h = useEngine();

/** A raw view of the stored record: generation and bin names (a tombstone is an existing record to it). */
const PROBE = `
function probe(rec)
  if not aerospike:exists(rec) then return map{ exists = false } end
  local names = list()
  for _, name in ipairs(record.bin_names(rec)) do list.append(names, name) end
  return map{ exists = true, gen = record.gen(rec), bins = names }
end
`;

beforeAll(async () => {
  await h().engine.ensureModule('tomb_probe', PROBE);
});

/** Valid arguments of each function (so the answer is about the record, not the arguments). */
const ARGS: Record<UdfFunction, BinValue[]> = {
  spend: [0, hash32('u0'), sd(txid()), false, false, H, R],
  spendMulti: spendArgs([item(0, hash32('u0'), sd(txid()))]),
  unspend: [0, hash32('u0'), sd(txid()), H, R],
  setMined: [7, H, 0, H, R, true, false],
  freeze: [0, hash32('u0'), H, R],
  unfreeze: [0, hash32('u0'), H, R],
  reassign: [0, hash32('u0'), hash32('new'), H, 1000, H, R],
  setConflicting: [true, H, R],
  setLocked: [true, H, R],
  preserveUntil: [H + 100, H, R],
  expirePreserve: [H, R],
  incrementSpentExtraRecs: [1, H, R],
  setSpentExtraRecs: [1, H, R],
  clearCreating: [H, R],
  addConflictingChild: [txid()],
  setDeletedChild: ['ab'.repeat(32)],
  markDeleting: [1],
  rerunDah: [H, R],
  setLongestChain: [true, H, R],
  replaceSpend: [0, hash32('u0'), sd(txid()), sd(txid()), H, R],
};

describe('a tombstone is a missing record for every function', () => {
  test.each(UDF_FUNCTIONS.map((fn) => [fn]))('%s', async (fn) => {
    const { engine, call, put } = h();
    const missing = await call(txid(), fn, ...ARGS[fn]);

    const key = await put();
    expect(await engine.remove(key)).toBe(true);
    const probe = () => engine.apply(key, { module: 'tomb_probe', fn: 'probe', args: [] });
    const before = await probe();
    expect(before).toMatchObject({ exists: true, bins: ['tombstone'] });

    expect(await call(key, fn, ...ARGS[fn])).toEqual(missing);
    expect(missing).toMatchObject({ status: 'ERROR', errorCode: 'TX_NOT_FOUND' });
    expect(await probe()).toEqual(before);
    // still a tombstone: reads see nothing, and the key can be created again
    expect(await engine.get(key)).toBeNull();
    await put({}, key);
    expect((await engine.get(key))!.bins.fee).toBe(100);
  });
});
