/**
 * Store-wide records: the settings record (B is fixed for the life of a store) and the chain tip H.
 */
import { retryWhile } from '../engine/deadline';
import type { RecordEngine } from '../engine/port';
import { InvalidArgumentError } from '../domain/errors';
import { checkTipAdvance } from './context';
import { isEngineError, storageError } from './udf-call';

export const SETTINGS_KEY = Buffer.from('meta:settings');
export const CHAIN_TIP_KEY = Buffer.from('meta:chaintip');
const MAX_TIP_RETRIES = 20;

function toInt(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/**
 * How long a store that starts during a cluster change keeps asking for the settings record (a node gone from the
 * client's partition map answers UNAVAILABLE until the next tend, about a second), within Lambda's 10 s init.
 */
export const SETTINGS_STARTUP_BUDGET_MS = 5000;
const SETTINGS_RETRY_MS = 250;

/** Runs `op`, sending it again while it fails UNAVAILABLE or TIMEOUT and the start-up's deadline allows. */
function atStartup<T>(op: () => Promise<T>, deadline: number, now: () => number): Promise<T> {
  const transient = (err: unknown) => isEngineError(err, 'UNAVAILABLE') || isEngineError(err, 'TIMEOUT');
  return retryWhile(op, transient, deadline, SETTINGS_RETRY_MS, now);
}

/**
 * Records B on first start; refuses another B later. A cluster in flux (UNAVAILABLE, TIMEOUT) is asked again for up
 * to `budgetMs` (the create is idempotent: one that applied unseen answers RECORD_EXISTS the next time).
 */
export async function ensureBatchSize(
  engine: RecordEngine,
  utxoBatchSize: number,
  budgetMs = SETTINGS_STARTUP_BUDGET_MS,
  now: () => number = Date.now,
): Promise<void> {
  // one budget for the create and the read after it: the whole start stays within Lambda's init
  const deadline = now() + budgetMs;
  try {
    await atStartup(() => engine.create(SETTINGS_KEY, { utxoBatchSize }), deadline, now);
    return;
  } catch (err) {
    if (!isEngineError(err, 'RECORD_EXISTS')) throw storageError('recording the store settings failed', err);
  }
  let stored;
  try {
    stored = await atStartup(() => engine.get(SETTINGS_KEY), deadline, now);
  } catch (err) {
    throw storageError('reading the store settings failed', err);
  }
  const recorded = toInt(stored?.bins.utxoBatchSize);
  if (recorded !== undefined && recorded !== utxoBatchSize) {
    throw new InvalidArgumentError(
      'UTXO_BATCH_SIZE',
      `this store was created with UTXO_BATCH_SIZE=${recorded}; it cannot run with ${utxoBatchSize}`,
    );
  }
}

export async function readChainTip(engine: RecordEngine): Promise<number> {
  try {
    const record = await engine.get(CHAIN_TIP_KEY);
    return toInt(record?.bins.height) ?? 0;
  } catch (err) {
    throw storageError('reading the chain tip failed', err);
  }
}

export async function writeChainTip(engine: RecordEngine, height: number): Promise<number> {
  try {
    try {
      await engine.update(CHAIN_TIP_KEY, { height });
    } catch (err) {
      if (!isEngineError(err, 'RECORD_NOT_FOUND')) throw err;
      try {
        await engine.create(CHAIN_TIP_KEY, { height });
      } catch (createErr) {
        if (!isEngineError(createErr, 'RECORD_EXISTS')) throw createErr;
        await engine.update(CHAIN_TIP_KEY, { height });
      }
    }
  } catch (err) {
    throw storageError('writing the chain tip failed', err);
  }
  return height;
}

/**
 * Sets H as the PUT /v1/chain/tip route asks. Without `force`, H may only stay or move forward by at most
 * `maxAdvance` blocks per call (a far-future tip would let cleanup delete parents whose children are not yet
 * buried and would mature coinbases early; a lower tip is a reorg, which only an admin forces). The check and the
 * write are one generation-checked step, so two concurrent calls cannot together move H further or back.
 * `maxAdvance` undefined: no bound (the store as a library; the service always sets MAX_TIP_ADVANCE).
 */
export async function moveChainTip(
  engine: RecordEngine,
  height: number,
  options: { force?: boolean; maxAdvance?: number } = {},
): Promise<number> {
  if (options.force || options.maxAdvance === undefined) return writeChainTip(engine, height);
  const maxAdvance = options.maxAdvance;
  for (let attempt = 0; attempt < MAX_TIP_RETRIES; attempt++) {
    let record;
    try {
      record = await engine.get(CHAIN_TIP_KEY);
    } catch (err) {
      throw storageError('reading the chain tip failed', err);
    }
    const current = toInt(record?.bins.height) ?? 0;
    if (height < current)
      throw new InvalidArgumentError(
        'height',
        `${height} is below the chain tip ${current}: moving the tip back needs PUT /v1/chain/tip/force (admin)`,
        { current, maxAdvance },
      );
    checkTipAdvance('height', height, current, maxAdvance);
    if (height === current && record) return current;
    try {
      if (record) await engine.update(CHAIN_TIP_KEY, { height }, { generation: record.generation });
      else await engine.create(CHAIN_TIP_KEY, { height });
      return height;
    } catch (err) {
      if (isEngineError(err, 'GENERATION_MISMATCH') || isEngineError(err, 'RECORD_EXISTS')) continue;
      throw storageError('writing the chain tip failed', err);
    }
  }
  throw storageError('writing the chain tip failed', new Error('too many concurrent updates'));
}

/** Raises H to `height` if it is lower (generation-checked; retried on a concurrent change). Returns H. */
export async function raiseChainTip(engine: RecordEngine, height: number): Promise<number> {
  for (let attempt = 0; attempt < MAX_TIP_RETRIES; attempt++) {
    try {
      const record = await engine.get(CHAIN_TIP_KEY);
      if (!record) {
        try {
          await engine.create(CHAIN_TIP_KEY, { height });
          return height;
        } catch (err) {
          if (isEngineError(err, 'RECORD_EXISTS')) continue;
          throw err;
        }
      }
      const current = toInt(record.bins.height) ?? 0;
      if (current >= height) return current;
      await engine.update(CHAIN_TIP_KEY, { height }, { generation: record.generation });
      return height;
    } catch (err) {
      if (isEngineError(err, 'GENERATION_MISMATCH')) continue;
      throw storageError('raising the chain tip failed', err);
    }
  }
  throw storageError('raising the chain tip failed', new Error('too many concurrent updates'));
}
