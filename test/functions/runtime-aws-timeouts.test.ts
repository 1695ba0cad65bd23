/**
 * The runtime's S3 and SQS clients give up on a connection that stops answering after AWS_SOCKET_TIMEOUT_MS of
 * silence (the SDK's default is to wait forever, holding a Lambda until its own timeout), so the store answers a
 * retryable STORAGE_ERROR instead. A local TCP server that accepts and never answers stands in for a stalled endpoint.
 */
import { createServer, type Server, type Socket } from 'net';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { loadConfig } from '../../lib/domain/config';
import { buildRuntime, type Runtime } from '../../lib/runtime';

let server: Server;
let port: number;
const sockets: Socket[] = [];
const saved = { ...process.env };
let runtime: Runtime | undefined;
let dir: string;

beforeAll(async () => {
  server = createServer((s) => void sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  dir = mkdtempSync(path.join(tmpdir(), 'aws-timeouts-'));
  Object.assign(process.env, {
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_MAX_ATTEMPTS: '1',
    AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
  });
});

afterAll(async () => {
  process.env = saved;
  await runtime?.engine.close();
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

test('AWS_SOCKET_TIMEOUT_MS must be a positive integer', () => {
  expect(loadConfig({}).awsSocketTimeoutMs).toBe(10000);
  expect(() => loadConfig({ AWS_SOCKET_TIMEOUT_MS: '0' })).toThrow(/AWS_SOCKET_TIMEOUT_MS/);
  expect(() => loadConfig({ AWS_SOCKET_TIMEOUT_MS: 'soon' })).toThrow(/AWS_SOCKET_TIMEOUT_MS/);
});

test('a stalled S3 or SQS endpoint fails the call after the socket timeout instead of hanging', async () => {
  runtime = await buildRuntime(
    loadConfig({
      UTXO_STORE: 'embedded::memory:',
      BLOB_STORE: 's3://blobs-bucket/utxo',
      SIGNAL_QUEUE: `http://127.0.0.1:${port}/000000000000/signals`,
      AWS_SOCKET_TIMEOUT_MS: '400',
    }),
  );
  const started = Date.now();
  await expect(runtime.blobs.get('ab'.repeat(32), 'tx')).rejects.toThrow();
  await expect(runtime.queue.send([{ txid: 'ab'.repeat(32), signal: 'ALLSPENT', height: 1 }])).rejects.toThrow();
  expect(Date.now() - started).toBeLessThan(5000);
  expect(sockets.length).toBeGreaterThanOrEqual(2);
}, 20000);
