/**
 * Delete (docs/operations.md): the blob(s), the pagination records (one batch), then the master (last, so that an
 * interrupted delete can be repeated).
 */
import { BIN } from '../domain/bins';
import { TxNotFoundError } from '../domain/errors';
import { masterKey, paginationKey } from '../domain/keys';
import { txidToHex } from '../domain/txid';
import { txidArg } from './args';
import type { StoreContext } from './context';
import { storageError } from './udf-call';

export async function deleteTx(ctx: StoreContext, txidValue: string): Promise<void> {
  const txid = txidArg(txidValue, 'txid');
  const txidHex = txidToHex(txid);
  try {
    const master = await ctx.engine.get(masterKey(txid), [BIN.totalExtraRecs, BIN.external]);
    if (!master) throw new TxNotFoundError(txidHex);
    if (master.bins[BIN.external]) {
      await ctx.blobs.delete(txidHex, 'tx');
      await ctx.blobs.delete(txidHex, 'outputs');
    }
    const extra = Number(master.bins[BIN.totalExtraRecs] ?? 0);
    if (extra > 0) {
      const pages = Array.from({ length: extra }, (_, i) => ({ key: paginationKey(txid, i + 1) }));
      const failed = (await ctx.engine.batchRemove(pages)).find((r) => !r.ok);
      if (failed && !failed.ok) throw failed.error;
    }
    await ctx.engine.remove(masterKey(txid));
  } catch (err) {
    if (err instanceof TxNotFoundError) throw err;
    throw storageError('deleting the transaction failed', err, { txid: txidHex });
  }
}
