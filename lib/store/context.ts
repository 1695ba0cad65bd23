/**
 * What every store operation needs: the three ports, the settings, the registered UDF module name, a clock and
 * the chain tip.
 */
import type { BlobStore } from '../blob/port';
import { InvalidArgumentError } from '../domain/errors';
import type { RecordEngine } from '../engine/port';
import type { SignalQueue } from '../signals/port';
import type { StoreSettings } from './types';

export interface StoreContext {
  engine: RecordEngine;
  blobs: BlobStore;
  signals: SignalQueue;
  settings: StoreSettings;
  moduleName: string;
  now: () => number;
  /** chain tip H */
  tip: () => Promise<number>;
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

/**
 * Refuses a caller-supplied height more than `maxAdvance` blocks above the stored tip `current`: 400 INVALID_ARGUMENT
 * naming `field`, with details.current and details.maxAdvance (as PUT /v1/chain/tip). `maxAdvance` undefined: no
 * bound (the store as a library; the service always sets MAX_TIP_ADVANCE). A lower height is not refused (a block
 * validated below the tip, a catch-up): it makes maturity and reassignment locks stricter, and sets an earlier
 * delete-at-height, which cleanup's child-safety rule still guards (docs/security.md, "What a validator is trusted with").
 */
export function checkCallerHeight(
  field: string,
  height: number,
  current: number,
  maxAdvance: number | undefined,
): void {
  if (maxAdvance !== undefined && height > current + maxAdvance)
    throw new InvalidArgumentError(
      field,
      `${height} is more than MAX_TIP_ADVANCE (${maxAdvance}) blocks above the chain tip ${current}: a request's ` +
        'height may not stand in for a tip that far ahead (move the tip first)',
      { current, maxAdvance },
    );
}
