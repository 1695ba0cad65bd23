/**
 * What every store operation needs: the three ports, the settings, the registered UDF module name, a clock and
 * the chain tip.
 */
import type { BlobStore } from '../blob/port';
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

/** H, unless the request carries its own height. */
export async function heightOf(ctx: StoreContext, override: number | undefined): Promise<number> {
  return override ?? (await ctx.tip());
}
