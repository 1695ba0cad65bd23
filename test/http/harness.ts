/**
 * End-to-end harness: the local server (server/local-server.ts) on a free port with an in-memory embedded engine,
 * a temporary blob directory and the inline queue, and a small JSON client over fetch.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { startServer, type LocalServer } from '../../server/local-server';
import type { Fixture } from '../fixtures/txs';

export interface Reply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  headers: Headers;
}

export interface Api {
  server: LocalServer;
  url: string;
  lines: string[];
  blobDir: string;
  get(p: string): Promise<Reply>;
  del(p: string): Promise<Reply>;
  post(p: string, body?: unknown): Promise<Reply>;
  put(p: string, body?: unknown): Promise<Reply>;
  /** a raw request: the body is sent as is */
  raw(method: string, p: string, body?: string | Buffer, headers?: Record<string, string>): Promise<Reply>;
  close(): Promise<void>;
}

export async function startApi(env: Record<string, string> = {}): Promise<Api> {
  const blobDir = mkdtempSync(path.join(tmpdir(), 'http-e2e-'));
  const lines: string[] = [];
  const server = await startServer({
    env: {
      UTXO_STORE: 'embedded::memory:',
      BLOB_STORE: `file:${blobDir}`,
      SIGNAL_QUEUE: 'inline',
      CLEANUP_INTERVAL_SECONDS: '0',
      ...env,
    },
    port: 0,
    log: (line) => lines.push(line),
  });
  const raw = async (
    method: string,
    p: string,
    body?: string | Buffer,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const res = await fetch(`${server.url}${p}`, {
      method,
      body: body === undefined ? undefined : typeof body === 'string' ? body : new Uint8Array(body),
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    });
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  };
  const json = (method: string) => (p: string, body?: unknown) =>
    raw(method, p, body === undefined ? undefined : JSON.stringify(body));
  return {
    server,
    url: server.url,
    lines,
    blobDir,
    get: (p) => raw('GET', p),
    del: (p) => raw('DELETE', p),
    post: json('POST'),
    put: json('PUT'),
    raw,
    close: async () => {
      await server.close();
      rmSync(blobDir, { recursive: true, force: true });
    },
  };
}

/** Asserts the error envelope and returns error. */
export function expectError(reply: Reply, status: number, code: string, field?: string) {
  expect({ status: reply.status, code: reply.body?.error?.code }).toEqual({ status, code });
  expect(typeof reply.body.error.message).toBe('string');
  if (field !== undefined) expect(reply.body.error.details?.field).toBe(field);
  return reply.body.error as { code: string; message: string; details?: Record<string, unknown> };
}

/** A 400 INVALID_ARGUMENT reply naming the field. */
export function expectBadArgument(reply: Reply, field: string) {
  return expectError(reply, 400, 'INVALID_ARGUMENT', field);
}

/** The requests of an Api, sent to the server useApi started, and the two most tests start from. */
export type ApiRequests = Pick<Api, 'get' | 'del' | 'post' | 'put' | 'raw'> & {
  /** POST /v1/txs (201 expected): the reply's body */
  create(f: Fixture, extra?: Record<string, unknown>): Promise<Reply['body']>;
  /** GET /v1/utxos/{txid}/{vout} (200 expected): the reply's body */
  utxoStatus(txid: string, vout: number): Promise<Reply['body']>;
};

/**
 * One local server for a test file's tests: started before them with the chain tip at `tip`, closed after them. The
 * requests go to it (from inside a test or hook: it starts in beforeAll).
 */
export function useApi(tip = 1000): ApiRequests {
  let api: Api | undefined;
  beforeAll(async () => {
    api = await startApi();
    expect((await api.put('/v1/chain/tip/force', { height: tip })).status).toBe(200);
  });
  afterAll(async () => {
    await api?.close();
  });
  const current = (): Api => {
    if (!api) throw new Error('the local server has not started: send requests from a test or hook');
    return api;
  };
  const expectOk = async (reply: Promise<Reply>, status: number) => {
    const r = await reply;
    expect(r.status).toBe(status);
    return r.body;
  };
  return {
    create: (f, extra = {}) => expectOk(current().post('/v1/txs', { tx: f.hex, ...extra }), 201),
    utxoStatus: (txid, vout) => expectOk(current().get(`/v1/utxos/${txid}/${vout}`), 200),
    get: (p) => current().get(p),
    del: (p) => current().del(p),
    post: (p, body) => current().post(p, body),
    put: (p, body) => current().put(p, body),
    raw: (method, p, body, headers) => current().raw(method, p, body, headers),
  };
}
