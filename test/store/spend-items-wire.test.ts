/**
 * What the store sends its engine for a batched spend (docs/udf.md, spendMulti): one spendMulti per parent record, its
 * items as one bytes value (encodeSpendItems), in the inputs' order.
 */
import { encodeSpendItems, type SpendMultiItem } from '../../lib/domain/udf';
import { encodeSpendingData } from '../../lib/domain/spending-data';
import type { BatchApplyItem, RecordEngine } from '../../lib/engine/port';
import { createUtxoStore } from '../../lib/store/utxo-store';
import { makeTx, rootTx, utxoHashOf } from '../fixtures/txs';
import { embeddedTarget } from './contract-target';
import { overriding, RecordingQueue } from './doubles';
import { BASE_SETTINGS } from './store-contract';

test('a tx spending two outputs of one parent is one spendMulti whose items are one bytes value', async () => {
  const target = await embeddedTarget('spend-items-wire');
  const sent: BatchApplyItem[] = [];
  const engine: RecordEngine = overriding(target.engine, {
    batchApply: (items: BatchApplyItem[], ...rest: unknown[]) => {
      sent.push(...items);
      return (target.engine.batchApply as (...a: unknown[]) => ReturnType<RecordEngine['batchApply']>)(items, ...rest);
    },
  });
  try {
    const store = await createUtxoStore({
      engine,
      blobs: target.blobs,
      signals: new RecordingQueue(target.signals),
      settings: BASE_SETTINGS,
      now: () => 1_700_000_000_000,
    });
    const parent = rootTx(3);
    await store.create(parent.hex, { blockHeight: 100 });
    const child = makeTx({
      inputs: [
        { parent, vout: 2 },
        { parent, vout: 0 },
      ],
    });
    const [result] = await store.spendMany([{ tx: child.hex }]);
    expect(result.ok).toBe(true);

    const spends = sent.filter((i) => i.fn === 'spendMulti');
    expect(spends).toHaveLength(1);
    const txid = Buffer.from(child.txid, 'hex').reverse();
    const items: SpendMultiItem[] = [2, 0].map((vout, vin) => ({
      offset: vout,
      utxoHash: Buffer.from(utxoHashOf(parent, vout), 'hex').reverse(),
      spendingData: encodeSpendingData(txid, vin),
    }));
    expect(spends[0].args[0]).toEqual(encodeSpendItems(items));
  } finally {
    await target.close();
  }
});
