/**
 * `npm start`: the whole service on one machine (README.md): the local server on 127.0.0.1:PORT with the
 * configuration of the environment (defaults: embedded engine at ./data/utxo.db, blobs in ./data/blobs, inline
 * signal queue). SIGTERM / SIGINT: stop accepting, finish in-flight requests, close the engine, exit 0.
 */
import { ConfigError } from '../lib/domain/config';
import { startServer } from './local-server';

async function main(): Promise<void> {
  const server = await startServer({ env: process.env });
  const { config } = server;
  const store = config.utxoStore.kind === 'embedded' ? `embedded:${config.utxoStore.path}` : 'aerospike';
  const blobs = config.blobStore.kind === 'file' ? `file:${config.blobStore.dir}` : `s3://${config.blobStore.bucket}`;
  console.log(
    `bsv-utxo-store listening on ${server.url} (store ${store}, blobs ${blobs}, queue ${config.signalQueue.kind}, ` +
      `cleanup every ${config.cleanupIntervalSeconds}s); OpenAPI at ${server.url}/openapi.json`,
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      console.log(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    console.log(`${signal}: finishing in-flight requests, then closing the store`);
    server.close().then(
      () => {
        console.log('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        console.error('shutdown failed:', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
  } else {
    console.error('start failed:', err instanceof Error ? (err.stack ?? err.message) : err);
  }
  process.exit(1);
});
