/**
 * A tx under maxTxSizeInStore whose record is still above the engine's record size limit: the engine refuses its
 * create RECORD_TOO_BIG, and the store writes it again external (its bytes in the blob store, the record without
 * them). The batch keeps only a tx's bytes once its records are planned, so this path parses the tx again: the
 * record and the blob must be the tx's own.
 */
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { UtxoStore } from '../../lib/store/types';
import { makeTx, rootTx } from '../fixtures/txs';
import { contractTarget } from './contract-target';
import { BASE_SETTINGS, type ContractTarget } from './store-contract';

/** bytes: a record holding a tx of a few hundred bytes fits, one holding 3 kB of script does not */
const RECORD_LIMIT = 2500;

let target: ContractTarget;
let store: UtxoStore;

beforeAll(async () => {
  target = contractTarget(await openEmbeddedEngine({ path: ':memory:', maxRecordSize: RECORD_LIMIT }), 'too-big', true);
  target.signals.setHandler({ handle: async () => undefined });
  store = await createUtxoStore({
    engine: target.engine,
    blobs: target.blobs,
    signals: target.signals,
    settings: { ...BASE_SETTINGS, utxoBatchSize: 100 },
  });
  await store.setChainTip(1000, { force: true });
});

afterAll(async () => {
  await target.close();
});

/** OP_FALSE OP_RETURN, then a 3000-byte push: an output that is stored but never spendable */
const bigScript = (tag: number) => '006a' + '4d' + 'b80b' + Buffer.alloc(3000, tag).toString('hex');

test('a tx whose record is too big for the engine is created external, beside txs that fit, in one batch', async () => {
  const parent = rootTx(2);
  await store.create(parent.hex);
  const small = makeTx({ inputs: [{ parent, vout: 0 }] });
  const big = makeTx({
    inputs: [{ parent, vout: 1 }],
    outputs: [{ satoshis: 0, script: bigScript(7) }, 500],
  });
  const results = await store.createMany([{ tx: small.hex }, { tx: big.hex }]);
  expect(results[0]).toMatchObject({ ok: true, value: { txid: small.txid, external: false, records: 1 } });
  expect(results[1]).toMatchObject({ ok: true, value: { txid: big.txid, external: true, records: 1 } });
  // the tx read back through its blob is the tx that was sent, and its spendable output is the right one
  expect((await store.get(big.txid, ['tx'])).tx).toBe(big.hex);
  const spender = makeTx({ inputs: [{ parent: big, vout: 1 }], outputs: [400] });
  await expect(store.spend({ tx: spender.hex })).resolves.toMatchObject({ spends: [{ status: 'OK' }] });
});

test('a tx too big even without its bytes fails alone with STORAGE_ERROR; the others are created', async () => {
  // 100 outputs: the UTXO hashes alone (32 bytes each) are above the record limit
  const wide = rootTx(100);
  const fits = rootTx(1);
  const results = await store.createMany([{ tx: wide.hex }, { tx: fits.hex }]);
  expect(results[0]).toMatchObject({ ok: false, error: { code: 'STORAGE_ERROR' } });
  expect(results[1]).toMatchObject({ ok: true, value: { txid: fits.txid } });
  await expect(store.get(wide.txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
});
