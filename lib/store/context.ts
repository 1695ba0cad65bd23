/**
 * What every store operation needs: the three ports, the settings, the registered UDF module name, a clock and
 * the chain tip.
 */
import type { BlobStore } from '../blob/port';
import { InvalidArgumentError } from '../domain/errors';
import type { RecordEngine } from '../engine/port';
import type { SignalQueue } from '../signals/port';
import type { SpendRefusal, StoreSettings } from './types';

export interface StoreContext {
  engine: RecordEngine;
  blobs: BlobStore;
  signals: SignalQueue;
  settings: StoreSettings;
  moduleName: string;
  now: () => number;
  /** chain tip H */
  tip: () => Promise<number>;
  /** told of every spend request the acknowledgement guard refused (the functions' SpendsRefused metric) */
  onSpendRefused?: (refusal: SpendRefusal) => void;
}

/**
 * H, unless the request carries its own height. A caller's height stands in for H (coinbase maturity, a reassigned
 * output's lock, the delete-at-height it sets), so it is bounded the way the tip is: at most MAX_TIP_ADVANCE above
 * the stored tip, else 400 naming `field` (checkCallerHeight). That costs the one tip read a request without a height
 * makes anyway (once per call, never per item).
 */
export async function heightOf(
  ctx: StoreContext,
  override: number | undefined,
  field = 'blockHeight',
): Promise<number> {
  if (override === undefined) return ctx.tip();
  if (ctx.settings.maxTipAdvance === undefined) return override;
  checkCallerHeight(field, override, await ctx.tip(), ctx.settings.maxTipAdvance);
  return override;
}

/** Bounds a caller's own height like the tip (checkTipAdvance), with the remedy that fits a request. */
export function checkCallerHeight(
  field: string,
  height: number,
  current: number,
  maxAdvance: number | undefined,
): void {
  checkTipAdvance(
    field,
    height,
    current,
    maxAdvance,
    "a request's height may not stand in for a tip that far ahead (move the tip first)",
  );
}

/**
 * Refuses a height more than `maxAdvance` blocks above the tip `current` (400 naming `field`, details.current and
 * details.maxAdvance): PUT /v1/chain/tip, and POST /v1/mined on the longest chain, which raises the tip to its block.
 * A caller's own height that stands in for the tip is bounded the same way (heightOf), with its own
 * `remedy`. `maxAdvance` undefined: no bound (the store as a library; the service always sets MAX_TIP_ADVANCE).
 */
export function checkTipAdvance(
  field: string,
  height: number,
  current: number,
  maxAdvance: number | undefined,
  remedy = 'move it in steps or use PUT /v1/chain/tip/force (admin)',
): void {
  if (maxAdvance !== undefined && height > current + maxAdvance)
    throw new InvalidArgumentError(
      field,
      `${height} is more than MAX_TIP_ADVANCE (${maxAdvance}) blocks above the chain tip ${current}; ${remedy}`,
      { current, maxAdvance },
    );
}

/**
 * A coinbase's creation height is where its maturity counts from when the create names no block (records.ts
 * coinbaseHeight): a height far below the tip would make it spendable early (at tip 1000, blockHeight 0 matured at
 * 100). So it may be at most `window` (MAX_TIP_ADVANCE) blocks below the tip, else 400 naming `field` with
 * details.current and details.maxBelow. A coinbase of an older block names that block (minedBlocks, blockValidation's
 * field); a tx that is no coinbase is not bounded below (its height sets only unminedSince).
 */
export function checkCoinbaseHeight(field: string, height: number, current: number, window: number | undefined): void {
  if (window !== undefined && height < current - window)
    throw new InvalidArgumentError(
      field,
      `${height} is more than MAX_TIP_ADVANCE (${window}) blocks below the chain tip ${current}: a coinbase matures ` +
        'from its creation height; name its block in minedBlocks instead',
      { current, maxBelow: window },
    );
}
