/**
 * The local server itself: OpenAPI document, one log line per request, configuration errors, clean shutdown
 * without losing an acknowledged write, and `npm start` (server/start.ts) end to end.
 */
import './quiet-logs';
import { spawn } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import * as http from 'http';
import * as net from 'net';
import { tmpdir } from 'os';
import * as path from 'path';
import { ConfigError } from '../../lib/domain/config';
import { startServer } from '../../server/local-server';
import { MAX_BODY_BYTES } from '../../lib/http/payload-limits';
import { ROUTES } from '../../lib/http/routes';
import { getRuntime } from '../../lib/runtime';
import { rootTx } from '../fixtures/txs';
import { expectError, startApi } from './harness';

const ROOT = path.resolve(__dirname, '../..');

describe('the local server', () => {
  test('GET /openapi.json documents every route of the table', async () => {
    const api = await startApi();
    try {
      const reply = await api.get('/openapi.json');
      expect(reply.status).toBe(200);
      const doc = reply.body;
      expect(doc.openapi).toBe('3.1.0');
      for (const r of ROUTES) {
        const op = doc.paths[r.path]?.[r.method.toLowerCase()];
        expect(op).toBeDefined();
        expect(op.operationId).toBe(r.operationId);
        expect(op['x-lambda-function']).toBe(r.fn);
        for (const status of Object.keys(r.responses)) expect(op.responses[status]).toBeDefined();
      }
      expect(Object.keys(doc.paths).sort()).toEqual([...new Set(ROUTES.map((r) => r.path))].sort());
      expect(doc.paths['/v1/txs'].post.requestBody.content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/CreateRequest',
      });
      const create = doc.components.schemas.CreateRequest;
      expect(create.required).toEqual(['tx']);
      expect(create.additionalProperties).toBe(false);
      expect(doc.components.schemas.SpendItem.properties.txid.pattern).toBe('^[0-9a-fA-F]{64}$');
      // the tx is decoded by its schema (a transform), and its document still says what a caller may send
      expect(create.properties.tx).toMatchObject({ type: 'string', minLength: 2, pattern: '^(?:[0-9a-fA-F]{2})+$' });
      const utxo = doc.paths['/v1/utxos/{txid}/{vout}'].get.parameters;
      expect(utxo.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
        'path:txid',
        'path:vout',
        'query:utxoHash',
      ]);
      expect(doc.servers).toEqual([{ url: api.url }]);
    } finally {
      await api.close();
    }
  });

  test('logs one line per request with method, path, status and error code', async () => {
    const api = await startApi();
    try {
      await api.get('/v1/health');
      await api.get('/v1/txs/xyz');
      await api.get('/nowhere');
      const requestLines = api.lines.filter((l) => / (GET|POST|PUT|DELETE) /.test(l));
      expect(requestLines).toHaveLength(3);
      expect(requestLines[0]).toMatch(/GET \/v1\/health 200 [\d.]+ms$/);
      expect(requestLines[1]).toMatch(/GET \/v1\/txs\/xyz 400 [\d.]+ms INVALID_ARGUMENT$/);
      expect(requestLines[2]).toMatch(/GET \/nowhere 404 [\d.]+ms ROUTE_NOT_FOUND$/);
    } finally {
      await api.close();
    }
  });

  test('an invalid setting stops start-up with a ConfigError naming the variable', async () => {
    await expect(startServer({ env: { UTXO_BATCH_SIZE: 'many' }, port: 0, log: () => undefined })).rejects.toThrow(
      ConfigError,
    );
    await expect(startServer({ env: { UTXO_STORE: 'mysql://x' }, port: 0, log: () => undefined })).rejects.toThrow(
      /UTXO_STORE/,
    );
  });

  test('close() finishes in-flight requests: every acknowledged create is durable', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'http-shutdown-'));
    const env = { UTXO_STORE: `embedded:${path.join(dir, 'utxo.db')}`, BLOB_STORE: `file:${path.join(dir, 'blobs')}` };
    try {
      const first = await startApi(env);
      const txs = Array.from({ length: 40 }, () => rootTx(2));
      const sent = txs.map((f) =>
        first.post('/v1/txs', { tx: f.hex }).then(
          (r) => r.status,
          () => 0,
        ),
      );
      // close while requests are in flight: after the first acknowledgement
      await Promise.race(sent);
      await first.server.close();
      const statuses = await Promise.all(sent);
      const acknowledged = txs.filter((_, i) => statuses[i] === 201);
      expect(acknowledged.length).toBeGreaterThan(0);
      for (const s of statuses) expect([0, 201]).toContain(s);

      const second = await startApi(env);
      try {
        for (const f of acknowledged) expect((await second.get(`/v1/txs/${f.txid}`)).status).toBe(200);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('close() waits for a handler whose client went away: the engine is not closed under a running write', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'http-abort-'));
    const env = { UTXO_STORE: `embedded:${path.join(dir, 'utxo.db')}`, BLOB_STORE: `file:${path.join(dir, 'blobs')}` };
    try {
      const first = await startApi(env);
      // hold the create inside the handler until released
      const store = (await getRuntime()).store;
      const create = store.create.bind(store);
      let entered!: () => void;
      const inHandler = new Promise<void>((r) => (entered = r));
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let outcome: string | undefined;
      store.create = async (...args: Parameters<typeof store.create>) => {
        entered();
        await gate;
        try {
          const result = await create(...args);
          outcome = 'stored';
          return result;
        } catch (err) {
          outcome = `failed: ${(err as Error).message}`;
          throw err;
        }
      };
      const f = rootTx(2);
      const body = JSON.stringify({ tx: f.hex });
      const req = http.request({
        host: '127.0.0.1',
        port: first.server.port,
        method: 'POST',
        path: '/v1/txs',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      req.on('error', () => undefined);
      req.end(body);
      await inHandler;
      req.destroy(); // the client gives up; the handler is still running
      await new Promise((r) => setTimeout(r, 50));

      let closed = false;
      const closing = first.server.close().then(() => (closed = true));
      await new Promise((r) => setTimeout(r, 200));
      expect(closed).toBe(false);
      release();
      await closing;
      expect(outcome).toBe('stored');

      const second = await startApi(env);
      try {
        expect((await second.get(`/v1/txs/${f.txid}`)).status).toBe(200);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a request body at exactly MAX_BODY_BYTES is read (and validated), one byte more is 413', async () => {
    const api = await startApi();
    try {
      const limit = MAX_BODY_BYTES;
      const prefix = '{"tx":"';
      const suffix = '"}';
      const atLimit = prefix + '0'.repeat(limit - prefix.length - suffix.length) + suffix;
      expect(Buffer.byteLength(atLimit)).toBe(limit);
      // a valid-looking but unparseable tx: 400 from the store's parser, not 413
      expectError(await api.raw('POST', '/v1/txs', atLimit), 400, 'INVALID_ARGUMENT', 'tx');
      const over = prefix + '0'.repeat(limit - prefix.length - suffix.length + 1) + suffix;
      expectError(await api.raw('POST', '/v1/txs', over), 413, 'PAYLOAD_TOO_LARGE');
      // under the body limit, but its JSON escaping in the Lambda event (each " becomes \") passes Lambda's 6 MB
      const escaped = expectError(await api.raw('POST', '/v1/txs', '"'.repeat(3_200_000)), 413, 'PAYLOAD_TOO_LARGE');
      expect(escaped.message).toMatch(/request event is \d+ bytes; Lambda's limit is 6291456/);
    } finally {
      await api.close();
    }
  });

  test('a request target that is not a valid URL is 400 and the server keeps serving', async () => {
    const api = await startApi();
    try {
      const reply = await new Promise<string>((resolve, reject) => {
        const sock = net.connect(api.server.port, '127.0.0.1', () =>
          sock.write('GET //[ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
        );
        let data = '';
        sock.on('data', (d: Buffer) => (data += d.toString()));
        sock.on('end', () => resolve(data));
        sock.on('error', reject);
      });
      expect(reply.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { error: { code: string } };
      expect(body.error.code).toBe('INVALID_ARGUMENT');
      expect((await api.get('/v1/health')).status).toBe(200);
      expect(api.lines.some((l) => / GET \/\/\[ 400 [\d.]+ms INVALID_ARGUMENT$/.test(l))).toBe(true);
    } finally {
      await api.close();
    }
  });
});

function runStart(env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'server/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

describe('npm start (server/start.ts)', () => {
  test('serves GET /v1/health within 30 s and stops on SIGTERM', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'http-start-'));
    const run = runStart({
      UTXO_STORE: `embedded:${path.join(dir, 'utxo.db')}`,
      BLOB_STORE: `file:${path.join(dir, 'blobs')}`,
      PORT: '0',
    });
    try {
      const started = Date.now();
      let url: string | undefined;
      while (!url && Date.now() - started < 30_000) {
        url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(run.output())?.[1];
        if (!url) await new Promise((r) => setTimeout(r, 100));
      }
      expect(url).toBeDefined();
      const health = await fetch(`${url}/v1/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });
      expect(Date.now() - started).toBeLessThan(30_000);
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      expect(run.output()).toMatch(/GET \/v1\/health 200/);
      expect(run.output()).toMatch(/stopped/);
    } finally {
      run.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 45_000);

  test('a configuration error is printed with the variable and exits 1', async () => {
    const run = runStart({ BLOCK_HEIGHT_RETENTION: '-3', PORT: '0' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(/configuration error: BLOCK_HEIGHT_RETENTION/);
  }, 45_000);
});
