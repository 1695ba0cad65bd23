/**
 * The batched operations' contract (createMany, spendMany, getMany, previousOutputs, getSpendMany, setMined of many),
 * run unchanged on any RecordEngine: per-item outcomes equal to the single call's, duplicates and the same output
 * twice in one batch, an engine batch failing half-way, round trips that grow only with the chunking, and a property
 * over random batches (every output spent by at most one tx, each tx all-or-nothing).
 */
import fc from 'fast-check';
import { SpendFailedError } from '../../lib/domain/errors';
import type { RecordEngine } from '../../lib/engine/port';
import { Reconciler } from '../../lib/signals/reconciler';
import type { ItemResult, StoreSettings, UtxoStore } from '../../lib/store/types';
import { createUtxoStore } from '../../lib/store/utxo-store';
import { makeTx, rootTx, spendItem, utxoHashOf, type Fixture } from '../fixtures/txs';
import { FaultPlan, faultyBlobs, faultyEngine, perDescribe, RecordingQueue } from './doubles';
import { BASE_SETTINGS, type MakeDeps, type ContractTarget } from './store-contract';

const MINED = { minedBlocks: [{ blockId: 9, blockHeight: 900, subtreeIdx: 0 }] };

/** Counts engine calls by method. */
function counting(inner: RecordEngine, calls: string[]): RecordEngine {
  return new Proxy(inner, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        if (process.env.DEBUG_CALLS) console.log(String(prop), Array.isArray(args[0]) ? args[0].length : '');
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

interface BatchHarness {
  store: UtxoStore;
  plan: FaultPlan;
  calls: string[];
  target: ContractTarget;
}

function codes<T>(results: ItemResult<T>[]): string[] {
  return results.map((r) => (r.ok ? 'OK' : r.error.code));
}

export function describeBatchContract(name: string, makeDeps: MakeDeps): void {
  async function open(overrides: Partial<StoreSettings> = {}): Promise<BatchHarness> {
    const target = await makeDeps();
    const plan = new FaultPlan();
    const calls: string[] = [];
    const engine = counting(faultyEngine(target.engine, plan), calls);
    const settings = { ...BASE_SETTINGS, ...overrides };
    const store = await createUtxoStore({
      engine,
      blobs: faultyBlobs(target.blobs, plan),
      signals: new RecordingQueue(target.signals),
      settings,
      now: () => 1_700_000_000_000,
    }).catch(async (err: unknown) => {
      await target.close();
      throw err;
    });
    target.signals.setHandler(
      new Reconciler({
        engine: target.engine,
        blobs: target.blobs,
        settings,
        moduleName: store.moduleName,
        getTip: () => store.getChainTip(),
      }),
    );
    await store.setChainTip(1000);
    return { store, plan, calls, target };
  }

  function useHarness(overrides: Partial<StoreSettings> = {}): () => BatchHarness {
    return perDescribe(
      () => open(overrides),
      async (h) => {
        h.plan.disarm();
        await h.store.setChainTip(1000);
        h.calls.length = 0;
      },
    );
  }

  async function roots(store: UtxoStore, n: number, outputs = 1): Promise<Fixture[]> {
    const fs = Array.from({ length: n }, () => rootTx(outputs));
    const results = await store.createMany(fs.map((f) => ({ tx: f.hex, options: MINED })));
    expect(codes(results)).toEqual(fs.map(() => 'OK'));
    return fs;
  }

  async function spender(store: UtxoStore, f: Fixture, vout = 0): Promise<string | undefined> {
    const s = await store.getSpend({ txid: f.txid, vout });
    return s.status === 'SPENT' ? s.spendingTxid : undefined;
  }

  describe(`batched operations: ${name}`, () => {
    describe('createMany', () => {
      const h = useHarness({ engineBatchSize: 3 });

      test('each tx created or failed on its own, in order, with the single call result', async () => {
        const [a, b, big] = [rootTx(2), rootTx(1), rootTx(6)]; // B = 4: big has a pagination record
        await h().store.create(b.hex);
        const results = await h().store.createMany([
          { tx: a.hex },
          { tx: b.hex },
          { tx: 'zz' },
          { tx: a.hex },
          { tx: big.hex, options: MINED },
          { tx: a.hex, options: { blockHeight: -1 } },
        ]);
        expect(codes(results)).toEqual(['OK', 'TX_EXISTS', 'INVALID_ARGUMENT', 'TX_EXISTS', 'OK', 'INVALID_ARGUMENT']);
        expect(results[0]).toEqual({ ok: true, value: await single(a) });
        expect(results[4]).toMatchObject({ ok: true, value: { txid: big.txid, records: 2, external: true } });
        expect(results[2]).toMatchObject({ ok: false, error: { details: { field: 'tx' } } });
        expect(results[5]).toMatchObject({ ok: false, error: { details: { field: 'blockHeight' } } });
        await expect(h().store.getSpend({ txid: big.txid, vout: 5 })).resolves.toEqual({ status: 'OK' });
        await expect(h().store.get(a.txid, ['unminedSince'])).resolves.toEqual({ txid: a.txid, unminedSince: 1000 });
        await expect(h().store.createMany([])).rejects.toMatchObject({ details: { field: 'txs' } });
      });

      async function single(f: Fixture) {
        return {
          txid: f.txid,
          fee: 0,
          sizeInBytes: f.hex.length / 2,
          extendedSize: f.hex.length / 2,
          external: false,
          records: 1,
        };
      }

      test('conflicting txs of a batch are registered in their parents in one batch', async () => {
        const [p] = await roots(h().store, 1, 2);
        const c1 = makeTx({ inputs: [{ parent: p, vout: 0 }] });
        const c2 = makeTx({ inputs: [{ parent: p, vout: 1 }] });
        const results = await h().store.createMany([
          { tx: c1.hex, options: { conflicting: true } },
          { tx: c2.hex, options: { conflicting: true } },
        ]);
        expect(codes(results)).toEqual(['OK', 'OK']);
        expect(((await h().store.get(p.txid, ['conflictingCs'])).conflictingCs as string[]).sort()).toEqual(
          [c1.txid, c2.txid].sort(),
        );
      });

      test('an engine batch failing half-way fails only its txs, which are not stored; a retry creates them', async () => {
        const fs = Array.from({ length: 6 }, () => rootTx(1)); // chunks of 3: two create batches
        h().plan.arm(3, 'once'); // 1 tip, 2 first create batch, 3 second create batch
        const results = await h().store.createMany(fs.map((f) => ({ tx: f.hex })));
        h().plan.disarm();
        expect(codes(results)).toEqual(['OK', 'OK', 'OK', 'STORAGE_ERROR', 'STORAGE_ERROR', 'STORAGE_ERROR']);
        for (const f of fs.slice(3))
          await expect(h().store.get(f.txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
        const retry = await h().store.createMany(fs.map((f) => ({ tx: f.hex })));
        expect(codes(retry)).toEqual(['TX_EXISTS', 'TX_EXISTS', 'TX_EXISTS', 'OK', 'OK', 'OK']);
      });
    });

    describe('spendMany', () => {
      const h = useHarness({ engineBatchSize: 4 });

      test('every tx spent on its own; per-item errors are the single spend errors', async () => {
        const [p1, p2, p3] = await roots(h().store, 3, 2);
        const ok1 = makeTx({
          inputs: [
            { parent: p1, vout: 0 },
            { parent: p2, vout: 0 },
          ],
        });
        const ok2 = makeTx({ inputs: [{ parent: p1, vout: 1 }] });
        const ghost = makeTx({ inputs: [{ parent: rootTx(), vout: 0 }] });
        await h().store.freeze([{ txid: p3.txid, vout: 0, utxoHash: utxoHashOf(p3, 0) }]);
        const frozen = makeTx({
          inputs: [
            { parent: p2, vout: 1 },
            { parent: p3, vout: 0 },
          ],
        });
        const results = await h().store.spendMany([
          { tx: ok1.hex },
          { tx: 'beef' },
          { tx: ghost.hex },
          { tx: ok2.hex },
          { tx: frozen.hex },
        ]);
        expect(codes(results)).toEqual(['OK', 'INVALID_ARGUMENT', 'TX_NOT_FOUND', 'OK', 'FROZEN']);
        expect(results[0]).toEqual({
          ok: true,
          value: {
            spends: [
              { txid: p1.txid, vout: 0, status: 'OK' },
              { txid: p2.txid, vout: 0, status: 'OK' },
            ],
          },
        });
        const failed = results[4] as { ok: false; error: SpendFailedError };
        expect(failed.error).toBeInstanceOf(SpendFailedError);
        expect(failed.error.outcomes.map((o) => o.status)).toEqual(['ROLLED_BACK', 'ERROR']);
        expect(await spender(h().store, p2, 1)).toBeUndefined();
        expect(await spender(h().store, p1, 1)).toBe(ok2.txid);
        // the same batch again: every tx is idempotent for its own spender
        const again = await h().store.spendMany([{ tx: ok1.hex }, { tx: ok2.hex }]);
        expect(codes(again)).toEqual(['OK', 'OK']);
        // and the explicit-spends form, with the batch options
        const [p4] = await roots(h().store, 1);
        const [r] = await h().store.spendMany([{ spends: [spendItem(p4, 0, rootTx())] }], { blockHeight: 999 });
        expect(r.ok).toBe(true);
        await expect(h().store.spendMany([], {})).rejects.toMatchObject({ details: { field: 'txs' } });
        await expect(h().store.spendMany([{ tx: ok1.hex }], { ignoreLocked: 1 as never })).rejects.toMatchObject({
          details: { field: 'ignoreLocked' },
        });
      });

      test('two txs of one batch spending the same output: the earlier wins, the later is rolled back whole', async () => {
        const [p, q] = await roots(h().store, 2, 1);
        const first = makeTx({ inputs: [{ parent: p, vout: 0 }] });
        const second = makeTx({
          inputs: [
            { parent: q, vout: 0 },
            { parent: p, vout: 0 },
          ],
        });
        const results = await h().store.spendMany([{ tx: first.hex }, { tx: second.hex }]);
        expect(codes(results)).toEqual(['OK', 'SPENT']);
        const error = (results[1] as { ok: false; error: SpendFailedError }).error;
        expect(error.outcomes).toEqual([
          { txid: q.txid, vout: 0, status: 'ROLLED_BACK' },
          expect.objectContaining({ status: 'ERROR', code: 'SPENT', spendingTxid: first.txid, vin: 0 }),
        ]);
        expect(await spender(h().store, p)).toBe(first.txid);
        expect(await spender(h().store, q)).toBeUndefined();
        // an earlier tx that takes the output and then fails as a whole gives it back: the later one is retried and wins
        const [u] = await roots(h().store, 1, 1);
        const loser = makeTx({
          inputs: [
            { parent: u, vout: 0 },
            { parent: rootTx(), vout: 0 },
          ],
        });
        const later = makeTx({ inputs: [{ parent: u, vout: 0 }] });
        const third = makeTx({ inputs: [{ parent: u, vout: 0 }] });
        const retried = await h().store.spendMany([{ tx: loser.hex }, { tx: later.hex }, { tx: third.hex }]);
        expect(codes(retried)).toEqual(['TX_NOT_FOUND', 'OK', 'SPENT']);
        expect(await spender(h().store, u)).toBe(later.txid);
        // the same tx twice in one batch: both OK (the second is a replay of the first)
        const [r] = await roots(h().store, 1, 1);
        const dup = makeTx({ inputs: [{ parent: r, vout: 0 }] });
        expect(codes(await h().store.spendMany([{ tx: dup.hex }, { tx: dup.hex }]))).toEqual(['OK', 'OK']);
      });

      test('an engine batch failing half-way: its txs fail STORAGE_ERROR with nothing left spent; the others stand', async () => {
        const ps = await roots(h().store, 8, 1); // 8 records, chunks of 4: two spend batches
        const txs = ps.map((p) => makeTx({ inputs: [{ parent: p, vout: 0 }] }));
        h().plan.arm(3, 'once'); // 1 tip, 2 first spend batch, 3 second spend batch
        const results = await h().store.spendMany(txs.map((t) => ({ tx: t.hex })));
        h().plan.disarm();
        expect(codes(results)).toEqual([...Array(4).fill('OK'), ...Array(4).fill('STORAGE_ERROR')]);
        for (let i = 0; i < 8; i++) expect(await spender(h().store, ps[i])).toBe(i < 4 ? txs[i].txid : undefined);
        // a tx with inputs in both chunks: the half that was written is rolled back
        const qs = await roots(h().store, 8, 1);
        const wide = makeTx({ inputs: qs.map((q) => ({ parent: q, vout: 0 })) });
        h().plan.arm(3, 'once');
        const [w] = await h().store.spendMany([{ tx: wide.hex }]);
        h().plan.disarm();
        expect(w).toMatchObject({ ok: false, error: { code: 'STORAGE_ERROR' } });
        for (const q of qs) expect(await spender(h().store, q)).toBeUndefined();
        expect(codes(await h().store.spendMany([{ tx: wide.hex }]))).toEqual(['OK']);
      });

      test('ENGINE_BATCH_SIZE must be a positive integer: the store refuses to start otherwise', async () => {
        for (const engineBatchSize of [0, 1.5, -3]) {
          await expect(open({ engineBatchSize })).rejects.toMatchObject({
            code: 'INVALID_ARGUMENT',
            details: { field: 'ENGINE_BATCH_SIZE' },
          });
        }
      });

      test('round trips grow with the chunks, not with the txs', async () => {
        async function callsFor(n: number): Promise<number> {
          const ps = await roots(h().store, n, 1);
          h().calls.length = 0;
          const results = await h().store.spendMany(
            ps.map((p) => ({ tx: makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex })),
          );
          expect(codes(results).every((c) => c === 'OK')).toBe(true);
          // the acknowledgement guard (Aerospike): one cluster check per request, whatever the number of txs
          const checks = h().calls.filter((c) => c === 'clusterState' || c === 'clusterView').length;
          expect(checks).toBeLessThanOrEqual(1);
          return h().calls.length - checks;
        }
        // 1 tip read + one batch per 4 records
        expect(await callsFor(4)).toBe(2);
        expect(await callsFor(40)).toBe(1 + 10);
        // the single spend: one tip read and one batch
        const [p] = await roots(h().store, 1, 1);
        h().calls.length = 0;
        await h().store.spend({ tx: makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex });
        expect(h().calls.filter((c) => c !== 'clusterState' && c !== 'clusterView')).toEqual(['get', 'batchApply']);
        // creates and setMined alike
        const fs = Array.from({ length: 40 }, () => rootTx(1));
        h().calls.length = 0;
        await h().store.createMany(fs.map((f) => ({ tx: f.hex })));
        expect(h().calls.filter((c) => c !== 'batchCreate')).toEqual(['get']);
        expect(h().calls.filter((c) => c === 'batchCreate')).toHaveLength(10);
        h().calls.length = 0;
        await h().store.setMined({ txids: fs.map((f) => f.txid), blockId: 3, blockHeight: 1001, subtreeIdx: 0 });
        expect(h().calls.filter((c) => c === 'batchApply')).toHaveLength(10);
        expect(h().calls.filter((c) => c === 'apply')).toHaveLength(0);
      });

      test('multi-record txs: their records go in the same engine batches; calls do not grow with the txs', async () => {
        async function callsFor(multi: number): Promise<string[]> {
          // B = 4: 9 outputs -> 3 records (master + 2 pagination records)
          const txs = [
            ...Array.from({ length: multi }, () => rootTx(9)),
            ...Array.from({ length: 8 }, () => rootTx(1)),
          ];
          h().calls.length = 0;
          const results = await h().store.createMany(txs.map((f) => ({ tx: f.hex })));
          expect(codes(results).every((c) => c === 'OK')).toBe(true);
          const calls = [...h().calls];
          for (const f of txs.slice(0, multi)) {
            await expect(h().store.getSpend({ txid: f.txid, vout: 8 })).resolves.toEqual({ status: 'OK' });
            await expect(h().store.get(f.txid, ['creating'])).resolves.toEqual({ txid: f.txid });
          }
          return calls;
        }
        const few = await callsFor(2);
        const many = await callsFor(12);
        // no single-record create or UDF call per tx: every step is a batch
        for (const calls of [few, many]) {
          expect(calls.filter((c) => c === 'create' || c === 'apply')).toEqual([]);
        }
        const kinds = (calls: string[]) => [...new Set(calls)].sort();
        expect(kinds(many)).toEqual(kinds(few));
        // batches of 4: masters read 3, locks 3, records (8 single + 24 pagination) 8, masters 3, clearCreating 6 + 3,
        // the creation locks released 3
        expect(many.filter((c) => c.startsWith('batch'))).toHaveLength(29);
        expect(many.filter((c) => c === 'batchRemove')).toHaveLength(3);
        expect(many.filter((c) => c === 'remove')).toEqual([]);
      });

      test('property: every output spent by at most one tx, each tx all-or-nothing, the first tx always wins, no tx fails only for an undone spend', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 3 }), {
              minLength: 1,
              maxLength: 8,
            }),
            async (inputsOf) => {
              const [p, q] = await roots(h().store, 2, 4); // outputs 0-3 of p, 4-7 are q's 0-3
              const out = (n: number) => (n < 4 ? { parent: p, vout: n } : { parent: q, vout: n - 4 });
              const txs = inputsOf.map((ins) => makeTx({ inputs: ins.map(out) }));
              const results = await h().store.spendMany(txs.map((t) => ({ tx: t.hex })));
              expect(results[0].ok).toBe(true);
              const holders = new Map<number, string | undefined>();
              for (let n = 0; n < 8; n++) {
                const o = out(n);
                holders.set(n, await spender(h().store, o.parent, o.vout));
              }
              txs.forEach((t, i) => {
                const held = inputsOf[i].map((n) => holders.get(n) === t.txid);
                expect(held.every((x) => x === results[i].ok)).toBe(true);
              });
              for (const [, holder] of holders) {
                if (holder !== undefined) expect(txs.some((t, i) => t.txid === holder && results[i].ok)).toBe(true);
              }
              // a failed tx lost at least one of its outputs to a tx that stands
              txs.forEach((_, i) => {
                if (!results[i].ok) expect(inputsOf[i].some((n) => holders.get(n) !== undefined)).toBe(true);
              });
            },
          ),
          { numRuns: 15 },
        );
      });
    });

    describe('reads', () => {
      const h = useHarness({ engineBatchSize: 2 });

      test('getMany: each txid found or failed on its own; utxos across pagination records in one batch read', async () => {
        const [a] = await roots(h().store, 1, 2);
        const big = rootTx(9); // records 0-2
        await h().store.create(big.hex);
        const missing = rootTx();
        h().calls.length = 0;
        const results = await h().store.getMany([a.txid, 'nope', missing.txid, big.txid], ['fee', 'utxos', 'tx']);
        // the 3 masters' sizes in chunks of 2 (the answer measured before it is read: security review N5), the same
        // masters in chunks of 2, the 2 pages
        expect(h().calls).toEqual(['batchGet', 'batchGet', 'batchGet', 'batchGet', 'batchGet']);
        expect(codes(results)).toEqual(['OK', 'INVALID_ARGUMENT', 'TX_NOT_FOUND', 'OK']);
        expect(results[0]).toEqual({ ok: true, value: await h().store.get(a.txid, ['fee', 'utxos', 'tx']) });
        const view = (results[3] as { ok: true; value: { utxos: unknown[]; tx: string } }).value;
        expect(view.utxos).toHaveLength(9);
        expect(view.tx).toBe(big.hex);
        await expect(h().store.getMany([a.txid], ['nope'])).rejects.toMatchObject({ details: { field: 'fields' } });
      });

      test('previousOutputs: satoshis and script from the record, the .tx blob or the .outputs blob', async () => {
        const [root] = await roots(h().store, 1, 3);
        const child = makeTx({ inputs: [{ parent: root, vout: 0 }], outputs: [300, 600] });
        const ext = await open({ externalizeAll: true });
        try {
          for (const store of [h().store, ext.store]) {
            if (store === ext.store) await store.createMany([{ tx: root.hex }]);
            const made = await store.createMany([{ tx: child.hex }]);
            expect(codes(made)).toEqual(['OK']);
            const results = await store.previousOutputs([
              { txid: root.txid, vout: 2 },
              { txid: child.txid, vout: 1 },
              { txid: child.txid, vout: 2 },
              { txid: rootTx().txid, vout: 0 },
              { txid: 'x', vout: 0 },
            ]);
            expect(codes(results)).toEqual(['OK', 'OK', 'UTXO_NOT_FOUND', 'TX_NOT_FOUND', 'INVALID_ARGUMENT']);
            expect(results[0]).toEqual({
              ok: true,
              value: { txid: root.txid, vout: 2, satoshis: 1002, lockingScript: '51' },
            });
            expect(results[1]).toEqual({
              ok: true,
              value: { txid: child.txid, vout: 1, satoshis: 600, lockingScript: '51' },
            });
          }
        } finally {
          await ext.target.close();
        }
      });

      test('getSpendMany: the single getSpend answer per output, one batch read and one tip read', async () => {
        const [p] = await roots(h().store, 1, 3);
        await h().store.spend({ tx: makeTx({ inputs: [{ parent: p, vout: 1 }] }).hex });
        const refs = [
          { txid: p.txid, vout: 0 },
          { txid: p.txid, vout: 1 },
          { txid: p.txid, vout: 2, utxoHash: utxoHashOf(p, 0) },
          { txid: p.txid, vout: -1 },
        ];
        h().calls.length = 0;
        const results = await h().store.getSpendMany(refs);
        expect(h().calls).toEqual(['batchGet', 'get']);
        expect(codes(results)).toEqual(['OK', 'OK', 'OK', 'INVALID_ARGUMENT']);
        for (let i = 0; i < 3; i++) {
          expect(results[i]).toEqual({ ok: true, value: await h().store.getSpend(refs[i]) });
        }
        await expect(h().store.getSpendMany('x' as never)).rejects.toMatchObject({ details: { field: 'utxos' } });
      });
    });
  });
}
