/**
 * What the store contracts run on: an engine, a FileBlobStore in a temporary directory and an InlineQueue whose
 * handler is the Reconciler. Closing removes the directory, and closes the engine when this target owns it.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { FileBlobStore } from '../../lib/blob';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import type { RecordEngine } from '../../lib/engine/port';
import { InlineQueue } from '../../lib/signals';
import type { ContractTarget } from './store-contract';

export function contractTarget(engine: RecordEngine, prefix: string, ownsEngine: boolean): ContractTarget {
  const dir = mkdtempSync(path.join(tmpdir(), `${prefix}-`));
  return {
    engine,
    blobs: new FileBlobStore({ dir }),
    signals: new InlineQueue(),
    close: async () => {
      if (ownsEngine) await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A contract target on a fresh in-memory embedded engine. */
export async function embeddedTarget(prefix: string): Promise<ContractTarget> {
  return contractTarget(await openEmbeddedEngine({ path: ':memory:' }), prefix, true);
}
