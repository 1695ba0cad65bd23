/**
 * The process-wide runtime of the handlers (lib/runtime.ts) for one test file: the store named by `utxoStore`
 * (default an in-memory embedded engine), blobs in a temporary directory, the inline queue, and any other settings in
 * `env`. Built before the file's tests, closed and the environment restored after them.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { resetRuntime } from '../../lib/runtime';

export function useTestRuntime(
  prefix: string,
  utxoStore = 'embedded::memory:',
  env: Record<string, string> = {},
): void {
  const saved = { ...process.env };
  let blobDir: string;
  beforeAll(async () => {
    blobDir = mkdtempSync(path.join(tmpdir(), `${prefix}-`));
    Object.assign(process.env, {
      UTXO_STORE: utxoStore,
      BLOB_STORE: `file:${blobDir}`,
      SIGNAL_QUEUE: 'inline',
      ...env,
    });
    await resetRuntime();
  });
  afterAll(async () => {
    await resetRuntime();
    process.env = saved;
    rmSync(blobDir, { recursive: true, force: true });
  });
}
