/**
 * setMined (docs/operations.md): adds or removes a block on each tx's master, evaluated at H + 1, as chunked engine
 * batches (ENGINE_BATCH_SIZE masters each, all in flight; one tip read); on the longest
 * chain it raises the chain tip to the block's height (at most MAX_TIP_ADVANCE above it, as PUT /v1/chain/tip). It
 * also finishes an unfinished multi-record create.
 */
import { TxNotFoundError } from '../domain/errors';
import { masterKey, paginationKey } from '../domain/keys';
import { intArg, optionalBoolArg, txidListArg } from './args';
import { checkTipAdvance, type StoreContext } from './context';
import { raiseChainTip } from './meta';
import { SignalBuffer } from './signals';
import type { SetMinedRequest, SetMinedResult } from './types';
import { callUdfChunked } from './batch';
import { storageError, udfError } from './udf-call';

export async function setMined(ctx: StoreContext, request: SetMinedRequest): Promise<SetMinedResult> {
  const txids = txidListArg(request.txids, 'txids');
  const blockId = intArg(request.blockId, 'blockId');
  const blockHeight = intArg(request.blockHeight, 'blockHeight');
  const subtreeIdx = intArg(request.subtreeIdx, 'subtreeIdx');
  const onLongestChain = optionalBoolArg(request.onLongestChain, 'onLongestChain', true);
  const unsetMined = optionalBoolArg(request.unsetMined, 'unsetMined');
  const tip = await ctx.tip();
  const raisesTip = onLongestChain && !unsetMined;
  // the block raises the tip to its height: bounded like PUT /v1/chain/tip, checked before anything is written
  if (raisesTip) checkTipAdvance('blockHeight', blockHeight, tip, ctx.settings.maxTipAdvance);
  const height = tip + 1;
  const R = ctx.settings.blockHeightRetention;
  const signals = new SignalBuffer();

  const results = await callUdfChunked(
    ctx,
    txids.map((t) => ({
      key: masterKey(t.bytes),
      fn: 'setMined' as const,
      args: [blockId, blockHeight, subtreeIdx, height, R, onLongestChain, unsetMined],
    })),
  );

  const blockIds: Record<string, number[]> = {};
  const pagesToFinish: { txid: string; key: Buffer }[] = [];
  let firstError: Error | undefined;
  results.forEach((r, i) => {
    const t = txids[i];
    if (!r.ok) {
      firstError ??= r.error;
      return;
    }
    const response = r.response;
    if (response.status !== 'OK') {
      if (response.errorCode === 'TX_NOT_FOUND') {
        if (unsetMined) blockIds[t.hex] = [];
        else firstError ??= new TxNotFoundError(t.hex);
      } else {
        firstError ??= udfError(response, { txid: t.hex });
      }
      return;
    }
    blockIds[t.hex] = response.blockIDs ?? [];
    signals.addFrom(t.hex, response, height);
    // the UDF clears `locked` and `creating` on the master whether it adds or removes the block: the pages follow
    if (response.childCount) {
      for (let n = 1; n <= response.childCount; n++)
        pagesToFinish.push({ txid: t.hex, key: paginationKey(t.bytes, n) });
    }
  });

  // setMined clears `creating` and `locked` on the master; the pagination records follow
  if (pagesToFinish.length > 0) {
    const cleared = await callUdfChunked(
      ctx,
      pagesToFinish.flatMap((p) => [
        { key: p.key, fn: 'clearCreating' as const, args: [height, R] },
        { key: p.key, fn: 'setLocked' as const, args: [false, height, R] },
      ]),
    );
    pagesToFinish.forEach((p, i) => {
      const created = cleared[2 * i];
      if (created.ok && created.response.status === 'OK') signals.addFrom(p.txid, created.response, height);
      else signals.add(p.txid, 'CREATING', height);
      // a page left locked would refuse its spends (LOCKED) after the tx was mined: the caller retries setMined
      const unlocked = cleared[2 * i + 1];
      if (unlocked.ok && unlocked.response.status === 'OK') signals.addFrom(p.txid, unlocked.response, height);
      else if (!(unlocked.ok && unlocked.response.errorCode === 'TX_NOT_FOUND')) {
        const reason = unlocked.ok ? unlocked.response.message : unlocked.error;
        firstError ??= storageError('unlocking the pagination records failed', reason, { txid: p.txid });
      }
    });
  }

  if (raisesTip) await raiseChainTip(ctx.engine, blockHeight);
  await signals.flush(ctx);
  if (firstError) throw firstError;
  return { blockIds };
}
