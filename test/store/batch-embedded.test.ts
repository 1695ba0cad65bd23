/**
 * The batched operations' contract on the embedded engine (':memory:'), a FileBlobStore in a temp dir, and an
 * InlineQueue whose handler is the Reconciler.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { FileBlobStore } from '../../lib/blob';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import { InlineQueue } from '../../lib/signals';
import { describeBatchContract } from './batch-contract';

describeBatchContract('embedded engine', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'batch-contract-'));
  const engine = await openEmbeddedEngine({ path: ':memory:' });
  return {
    engine,
    blobs: new FileBlobStore({ dir }),
    signals: new InlineQueue(),
    close: async () => {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
