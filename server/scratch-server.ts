/**
 * A throw-away local server for the benches and the client example: a free port, the embedded engine in memory, blobs
 * in a fresh temporary folder, signals inline, no log and no cleanup timer. close() also removes the folder.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { startServer, type LocalServer } from './local-server';

export async function startScratchServer(tmpPrefix: string): Promise<LocalServer> {
  const dir = mkdtempSync(path.join(tmpdir(), tmpPrefix));
  const server = await startServer({
    env: { UTXO_STORE: 'embedded::memory:', BLOB_STORE: `file:${dir}`, SIGNAL_QUEUE: 'inline' },
    port: 0,
    log: () => undefined,
    cleanupIntervalSeconds: 0,
  });
  return {
    ...server,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
