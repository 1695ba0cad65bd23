/**
 * createUtxoStore: every store operation (docs/operations.md) over RecordEngine + BlobStore + SignalQueue. On start it
 * registers the UDF module under its content-versioned name and checks that B matches the store's recorded B.
 */
import type { BlobStore } from '../blob/port';
import type { RecordEngine } from '../engine/port';
import type { SignalQueue } from '../signals/port';
import { InvalidArgumentError } from '../domain/errors';
import { CE_MAX_CLUSTER_SIZE } from '../domain/engine-limits';
import { intArg } from './args';
import * as admin from './admin';
import type { StoreContext } from './context';
import { conflictingChildren, counterConflicting } from './conflicts';
import { create, createMany } from './create-many';
import { deleteTx } from './delete';
import { setOnLongestChain } from './longest-chain';
import { ensureBatchSize, moveChainTip, readChainTip } from './meta';
import { setMined } from './mined';
import { processConflicting } from './process-conflicting';
import { get, getMany, queryUnmined } from './read';
import { getSpend, getSpendMany } from './utxo-status';
import { previousOutputs } from './previous-outputs';
import { spend, spendMany } from './spend-many';
import { unspend } from './unspend';
import type { HealthReport, SpendRefusal, StoreSettings, UtxoStore } from './types';
import { storageError } from './udf-call';
import { loadUdfSource, udfModuleName } from './udf-module';
import { iterateUnmined } from './unmined-iterator';
import { verifySpenders } from './verify-spends';

export interface UtxoStoreDeps {
  engine: RecordEngine;
  blobs: BlobStore;
  signals: SignalQueue;
  settings: StoreSettings;
  now?: () => number;
  /** UDF source (default: loadUdfSource()) */
  udfSource?: string;
  /**
   * Told of every spend request whose applied spends the acknowledgement guard refused (SPEND_ACK_GUARD; the functions
   * emit it as the SpendsRefused metric by reason). Called synchronously; it must not throw.
   */
  onSpendRefused?: (refusal: SpendRefusal) => void;
}

function checkSettings(s: StoreSettings): StoreSettings {
  if (s === null || typeof s !== 'object') throw new InvalidArgumentError('settings', 'expected an object');
  intArg(s.utxoBatchSize, 'UTXO_BATCH_SIZE', 1, 0x7fffffff);
  intArg(s.blockHeightRetention, 'BLOCK_HEIGHT_RETENTION', 0, 0x7fffffff);
  intArg(s.maxTxSizeInStore, 'MAX_TX_SIZE_IN_STORE', 0, Number.MAX_SAFE_INTEGER);
  intArg(s.coinbaseMaturity, 'COINBASE_MATURITY', 0, 0x7fffffff);
  if (s.engineBatchSize !== undefined) intArg(s.engineBatchSize, 'ENGINE_BATCH_SIZE', 1, 100000);
  if (typeof s.externalizeAll !== 'boolean')
    throw new InvalidArgumentError('EXTERNALIZE_ALL', 'expected true or false');
  if (s.maxTipAdvance !== undefined) intArg(s.maxTipAdvance, 'MAX_TIP_ADVANCE', 1, 0x7fffffff);
  if (s.maxGetOutputs !== undefined) intArg(s.maxGetOutputs, 'MAX_GET_OUTPUTS', 1, 10000000);
  if (s.maxGetTxBytes !== undefined) intArg(s.maxGetTxBytes, 'MAX_GET_TX_BYTES', 1, 0x7fffffff);
  if (s.spendAckGuard !== undefined && !['refuse', 'settled', 'off'].includes(s.spendAckGuard))
    throw new InvalidArgumentError('SPEND_ACK_GUARD', 'expected refuse, settled or off');
  if (s.clusterSize !== undefined) intArg(s.clusterSize, 'AEROSPIKE_CLUSTER_SIZE', 0, CE_MAX_CLUSTER_SIZE);
  return { ...s };
}

async function probe(ping: () => Promise<void>): Promise<string> {
  try {
    await ping();
    return 'ok';
  } catch (err) {
    return `unavailable: ${err instanceof Error ? err.message : String(err)}`;
  }
}

export async function createUtxoStore(deps: UtxoStoreDeps): Promise<UtxoStore & { moduleName: string }> {
  const settings = checkSettings(deps.settings);
  const { engine, blobs, signals } = deps;
  const source = deps.udfSource ?? loadUdfSource();
  const moduleName = udfModuleName(source);
  try {
    await engine.ensureModule(moduleName, source);
  } catch (err) {
    throw storageError(`registering the UDF module ${moduleName} failed`, err);
  }
  await ensureBatchSize(engine, settings.utxoBatchSize);

  const ctx: StoreContext = {
    engine,
    blobs,
    signals,
    settings,
    moduleName,
    now: deps.now ?? Date.now,
    tip: () => readChainTip(engine),
    onSpendRefused: deps.onSpendRefused,
  };

  return {
    moduleName,
    create: (tx, options) => create(ctx, tx, options),
    createMany: (txs) => createMany(ctx, txs),
    spend: (request, options) => spend(ctx, request, options),
    spendMany: (requests, options) => spendMany(ctx, requests, options),
    unspend: (spends, options) => unspend(ctx, spends, options),
    setMined: (request) => setMined(ctx, request),
    setLocked: (txids, locked) => admin.setLocked(ctx, txids, locked),
    setConflicting: (txids, conflicting) => admin.setConflicting(ctx, txids, conflicting),
    freeze: (utxos) => admin.freeze(ctx, utxos),
    unfreeze: (utxos) => admin.unfreeze(ctx, utxos),
    reassign: (request) => admin.reassign(ctx, request),
    preserve: (txids, untilHeight) => admin.preserve(ctx, txids, untilHeight),
    get: (txid, fields) => get(ctx, txid, fields),
    getMany: (txids, fields) => getMany(ctx, txids, fields),
    previousOutputs: (outpoints) => previousOutputs(ctx, outpoints),
    getSpend: (ref) => getSpend(ctx, ref),
    getSpendMany: (refs) => getSpendMany(ctx, refs),
    delete: (txid) => deleteTx(ctx, txid),
    queryUnmined: (query) => queryUnmined(ctx, query),
    getCounterConflicting: (txid) => counterConflicting(ctx, txid),
    getConflictingChildren: (txid) => conflictingChildren(ctx, txid),
    setOnLongestChain: (txids, onLongestChain) => setOnLongestChain(ctx, txids, onLongestChain),
    processConflicting: (txids) => processConflicting(ctx, txids),
    iterateUnmined: (query) => iterateUnmined(ctx, query),
    verifySpenders: (txids, options) => verifySpenders(ctx, txids, options),
    getChainTip: () => readChainTip(engine),
    setChainTip: async (height, options) =>
      moveChainTip(engine, intArg(height, 'height'), { force: options?.force, maxAdvance: settings.maxTipAdvance }),
    health: async (): Promise<HealthReport> => {
      const [e, b, q] = await Promise.all([
        probe(() => engine.ping()),
        probe(() => blobs.ping()),
        probe(() => signals.ping()),
      ]);
      return {
        status: e === 'ok' && b === 'ok' && q === 'ok' ? 'ok' : 'degraded',
        engine: `${engine.kind}: ${e}`,
        blobStore: `${blobs.kind}: ${b}`,
        queue: `${signals.kind}: ${q}`,
      };
    },
  };
}
