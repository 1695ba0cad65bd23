/**
 * The cleanup pass through the real store on the embedded engine (':memory:'): the first timeline of docs/cleanup.md, a reorg
 * of the child, and DELETING refusals.
 */
import { Script, Transaction } from '@bsv/sdk';
import { CleanupService } from '../../lib/cleanup';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import type { RecordEngine } from '../../lib/engine/port';
import { InlineQueue } from '../../lib/signals';
import { createUtxoStore } from '../../lib/store';
import type { UtxoStore } from '../../lib/store/types';
import { MemoryBlobs } from './fakes';

const R = 288;
const lock = () => Script.fromASM('OP_TRUE');

function rootTx(tag: number): Transaction {
  const tx = new Transaction();
  tx.version = 1;
  tx.addOutput({ lockingScript: lock(), satoshis: 1000 + tag });
  return tx;
}

function spender(parent: Transaction, vout = 0): Transaction {
  const tx = new Transaction();
  tx.version = 1;
  tx.addInput({
    sourceTransaction: parent,
    sourceOutputIndex: vout,
    unlockingScript: new Script(),
    sequence: 0xffffffff,
  });
  tx.addOutput({ lockingScript: lock(), satoshis: 500 });
  return tx;
}

describe('cleanup through the store on the embedded engine', () => {
  let engine: RecordEngine;
  let store: UtxoStore & { moduleName: string };
  let service: CleanupService;
  let tag = 0;

  beforeEach(async () => {
    engine = await openEmbeddedEngine({ path: ':memory:' });
    const settings = {
      utxoBatchSize: 20000,
      blockHeightRetention: R,
      maxTxSizeInStore: 1048576,
      externalizeAll: false,
      coinbaseMaturity: 100,
    };
    const signals = new InlineQueue();
    store = await createUtxoStore({ engine, blobs: new MemoryBlobs(), signals, settings });
    service = new CleanupService({
      engine,
      blobs: new MemoryBlobs(),
      moduleName: store.moduleName,
      settings: { utxoBatchSize: 20000, blockHeightRetention: R, cleanupSafetyWindow: R, batchSize: 100 },
      getTip: () => store.getChainTip(),
    });
  });

  afterEach(async () => {
    await engine.close();
  });

  async function spentParent(): Promise<{ parent: Transaction; child: Transaction }> {
    const parent = rootTx(tag++);
    await store.setChainTip(899);
    await store.create(parent.toHex());
    await store.setMined({ txids: [parent.id('hex')], blockId: 90, blockHeight: 900, subtreeIdx: 0 });
    await store.setChainTip(999);
    const child = spender(parent);
    await store.create(child.toHexEF());
    // evaluated at tip + 1 = 1000: DAH = 1288
    await store.spend({ tx: child.toHexEF() });
    return { parent, child };
  }

  test('the first timeline of docs/cleanup.md: child mined at 1001, kept at 1288, deleted at 1289', async () => {
    const { parent, child } = await spentParent();
    await store.setChainTip(1000);
    await store.setMined({ txids: [child.id('hex')], blockId: 101, blockHeight: 1001, subtreeIdx: 0 });
    expect(await service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { child_unstable: 1 } });
    expect(await service.runPass({ tip: 1289 })).toMatchObject({ deleted: 1, errors: 0 });
    await expect(store.get(parent.id('hex'))).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
    await expect(store.get(child.id('hex'))).resolves.toMatchObject({ txid: child.id('hex') });
  });

  test('reorg of the child (unsetMined): kept until re-mined and stable', async () => {
    const { parent, child } = await spentParent();
    await store.setMined({ txids: [child.id('hex')], blockId: 110, blockHeight: 1100, subtreeIdx: 0 });
    await store.setMined({
      txids: [child.id('hex')],
      blockId: 110,
      blockHeight: 1100,
      subtreeIdx: 0,
      unsetMined: true,
    });
    expect(await service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
    await store.setMined({ txids: [child.id('hex')], blockId: 130, blockHeight: 1300, subtreeIdx: 0 });
    expect(await service.runPass({ tip: 1587 })).toMatchObject({ deleted: 0, kept: { child_unstable: 1 } });
    expect(await service.runPass({ tip: 1588 })).toMatchObject({ deleted: 1 });
    await expect(store.get(parent.id('hex'))).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
  });

  test('a spend or unspend of a record marked deleting is refused (DELETING)', async () => {
    const parent = rootTx(tag++);
    const other = rootTx(tag++);
    parent.addOutput({ lockingScript: lock(), satoshis: 700 });
    await store.create(parent.toHex());
    await store.create(other.toHex());
    const first = spender(parent, 0);
    await store.create(first.toHexEF());
    await store.spend({ tx: first.toHexEF() });
    await engine.update(Buffer.from(parent.id('hex'), 'hex').reverse(), { deleting: true });
    const second = spender(parent, 1);
    await store.create(second.toHexEF());
    await expect(store.spend({ tx: second.toHexEF() })).rejects.toMatchObject({ code: 'DELETING' });
    const view = await store.get(parent.id('hex'), ['utxos']);
    const slot = (view.utxos as { utxoHash: string }[])[0];
    await expect(
      store.unspend([
        { txid: parent.id('hex'), vout: 0, utxoHash: slot.utxoHash, spendingTxid: first.id('hex'), vin: 0 },
      ]),
    ).rejects.toMatchObject({ code: 'DELETING' });
  });
});
