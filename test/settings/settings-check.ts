/**
 * The settings check (issue: every setting a user may choose works on the real engine, or is refused at start-up):
 * for each variable docs/settings.md lists, its documented boundaries, one step past each, and a few random valid
 * values (fast-check), the local server either starts within 30 s and serves one request of each route family
 * (create, spend, a batch, an unmined page, a cleanup pass), or refuses at start-up with a ConfigError naming the
 * variable. Values outside the documented range must be refused. Shared by the embedded run (settings-check.test.ts,
 * in `npm test`) and the real-cluster run (test/engine-aerospike/settings-check.test.ts, AEROSPIKE_HOSTS).
 */
import '../http/quiet-logs';
import { spawn } from 'child_process';
import { readFileSync, mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import fc from 'fast-check';
import { ConfigError } from '../../lib/domain/config';
import { startServer, type LocalServer } from '../../server/local-server';
import { makeTx, rootTx } from '../fixtures/txs';

export const START_WITHIN_MS = 30_000;

export interface DocumentedSetting {
  name: string;
  range: string;
}

/** The variables of docs/settings.md that loadConfig reads (the tables above "Read elsewhere"), with their range. */
export function documentedSettings(): DocumentedSetting[] {
  const text = readFileSync(path.join(__dirname, '../../docs/settings.md'), 'utf8').split('## Read elsewhere')[0];
  return text
    .split('\n')
    .filter((line) => /^\| `[A-Z0-9_]+` \|/.test(line))
    .map((line) => {
      const cells = line.split('|').map((c) => c.trim());
      return { name: cells[1].replace(/`/g, ''), range: cells[3] };
    });
}

export type Expect = 'valid' | 'invalid';
export interface SettingCase {
  name: string;
  value: string;
  expect: Expect;
  /** extra variables the case needs (e.g. a matching AEROSPIKE_MAX_CONNS_PER_NODE) */
  with?: Record<string, string>;
}

const bound = (s: string): number => (s === '2^53-1' ? Number.MAX_SAFE_INTEGER : Number(s));

/**
 * The values to try for a documented integer range "<min> to <max>": both boundaries and one past each, and `random`
 * values drawn inside it (seeded, so a failure names a value that fails again).
 */
export function integerCases(setting: DocumentedSetting, random: number, seed: number): SettingCase[] | undefined {
  const m = /^(-?\d+) to (2\^53-1|\d+)\b/.exec(setting.range);
  if (!m) return undefined;
  const [min, max] = [bound(m[1]), bound(m[2])];
  const { name } = setting;
  const drawn = fc.sample(fc.integer({ min, max }), { numRuns: random, seed });
  return [
    ...[min, max, ...drawn].map((v) => ({ name, value: String(v), expect: 'valid' as const })),
    { name, value: String(min - 1), expect: 'invalid' },
    // one past the largest safe integer is not a safe integer: still refused
    { name, value: max === Number.MAX_SAFE_INTEGER ? '9007199254740992' : String(max + 1), expect: 'invalid' },
  ];
}

export function booleanCases(name: string): SettingCase[] {
  return [
    ...['true', 'false', '1', '0', 'yes', 'no'].map((value) => ({ name, value, expect: 'valid' as const })),
    { name, value: 'maybe', expect: 'invalid' },
  ];
}

export type Outcome =
  | { kind: 'served'; startMs: number }
  | { kind: 'refused'; variable: string; message: string }
  | { kind: 'failed'; problem: string };

interface Reply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

async function call(url: string, method: string, p: string, body?: unknown): Promise<Reply> {
  const res = await fetch(`${url}${p}`, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * One request of each route family; the problems found (empty: all served). A cleanup pass must report no error and
 * no range it could not query.
 */
export async function serveEveryFamily(url: string): Promise<string[]> {
  const problems: string[] = [];
  const expectStatus = (what: string, reply: Reply, status: number) => {
    if (reply.status !== status) problems.push(`${what}: ${reply.status} ${JSON.stringify(reply.body)?.slice(0, 300)}`);
  };
  expectStatus('PUT /v1/chain/tip/force', await call(url, 'PUT', '/v1/chain/tip/force', { height: 1000 }), 200);
  const root = rootTx(2);
  expectStatus('create POST /v1/txs', await call(url, 'POST', '/v1/txs', { tx: root.hex }), 201);
  const child = makeTx({ inputs: [{ parent: root, vout: 0 }] });
  expectStatus('spend POST /v1/spends', await call(url, 'POST', '/v1/spends', { tx: child.hex }), 200);
  const batch = await call(url, 'POST', '/v1/batch/txs', { txs: [{ tx: rootTx(1).hex }] });
  expectStatus('batch POST /v1/batch/txs', batch, 200);
  if (batch.status === 200 && batch.body?.results?.[0]?.status !== 201) {
    problems.push(`batch POST /v1/batch/txs: item ${JSON.stringify(batch.body.results?.[0])?.slice(0, 300)}`);
  }
  const page = await call(url, 'GET', '/v1/unmined/txs?limit=10');
  expectStatus('unmined page GET /v1/unmined/txs', page, 200);
  const cleanup = await call(url, 'POST', '/v1/cleanup', { maxSeconds: 20 });
  expectStatus('cleanup POST /v1/cleanup', cleanup, 200);
  if (cleanup.status === 200 && (cleanup.body.errors !== 0 || cleanup.body.rangesFailed !== undefined)) {
    problems.push(`cleanup POST /v1/cleanup: ${JSON.stringify(cleanup.body)}`);
  }
  return problems;
}

/** Starts the local server with `env` (PORT 0 unless the case sets it), serves every family, closes it. */
export async function tryEnv(env: Record<string, string>): Promise<Outcome> {
  const blobDir = mkdtempSync(path.join(tmpdir(), 'settings-check-'));
  const started = Date.now();
  let server: LocalServer;
  try {
    const starting = startServer({
      env: { BLOB_STORE: `file:${blobDir}`, SIGNAL_QUEUE: 'inline', CLEANUP_INTERVAL_SECONDS: '0', PORT: '0', ...env },
      log: () => undefined,
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not started within ${START_WITHIN_MS} ms`)), START_WITHIN_MS);
    });
    try {
      server = await Promise.race([starting, late]);
    } finally {
      clearTimeout(timer);
    }
  } catch (err) {
    rmSync(blobDir, { recursive: true, force: true });
    if (err instanceof ConfigError) return { kind: 'refused', variable: err.variable, message: err.message };
    return { kind: 'failed', problem: `start: ${err instanceof Error ? err.message : String(err)}` };
  }
  const startMs = Date.now() - started;
  try {
    const problems = await serveEveryFamily(server.url);
    return problems.length === 0 ? { kind: 'served', startMs } : { kind: 'failed', problem: problems.join('; ') };
  } finally {
    await server.close();
    rmSync(blobDir, { recursive: true, force: true });
  }
}

/** What is wrong with `outcome` for `c` (undefined: as it should be). */
export function judge(c: SettingCase, outcome: Outcome): string | undefined {
  const label = `${c.name}=${c.value.length > 80 ? `${c.value.slice(0, 80)}…` : c.value}`;
  if (outcome.kind === 'refused') {
    if (outcome.variable !== c.name)
      return `${label}: refused naming ${outcome.variable}, not ${c.name}: ${outcome.message}`;
    return undefined; // refused naming the setting: allowed for any value
  }
  if (c.expect === 'invalid') return `${label}: outside the documented range, but ${outcome.kind}`;
  if (outcome.kind === 'failed') return `${label}: ${outcome.problem}`;
  return undefined;
}

/**
 * As tryEnv, but `npm start` (server/start.ts) in a process of its own: the Aerospike client's process-wide command
 * queue is set up once per process, so client settings are tried each in a fresh process, as a deployment starts.
 */
export async function tryEnvInProcess(env: Record<string, string>): Promise<Outcome> {
  const blobDir = mkdtempSync(path.join(tmpdir(), 'settings-check-'));
  const root = path.join(__dirname, '../..');
  const child = spawn(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), 'server/start.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      BLOB_STORE: `file:${blobDir}`,
      SIGNAL_QUEUE: 'inline',
      CLEANUP_INTERVAL_SECONDS: '0',
      PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = Date.now();
  try {
    let url: string | undefined;
    while (url === undefined) {
      url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url) break;
      if (child.exitCode !== null) {
        await exited;
        const m = /configuration error: ([A-Z0-9_]+): (.*)/.exec(stderr);
        if (m) return { kind: 'refused', variable: m[1], message: `${m[1]}: ${m[2]}` };
        return { kind: 'failed', problem: `start: exit ${child.exitCode}: ${stderr.slice(0, 500)}` };
      }
      if (Date.now() - started > START_WITHIN_MS) {
        return { kind: 'failed', problem: `not started within ${START_WITHIN_MS} ms: ${stderr.slice(0, 300)}` };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const startMs = Date.now() - started;
    const problems = await serveEveryFamily(url);
    return problems.length === 0 ? { kind: 'served', startMs } : { kind: 'failed', problem: problems.join('; ') };
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      const stopped = await Promise.race([exited, new Promise((r) => setTimeout(() => r('late'), 10_000))]);
      if (stopped === 'late') child.kill('SIGKILL');
    }
    rmSync(blobDir, { recursive: true, force: true });
  }
}
