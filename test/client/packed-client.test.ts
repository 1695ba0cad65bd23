/**
 * The client as a service outside this repository gets it: `npm pack` of packages/client, the tarball installed
 * alone into a scratch project (with typescript and @types/node, which a TypeScript node service has anyway), a
 * strict TypeScript consumer (module NodeNext) compiled against it as ESM (import) and as CommonJS (require), each
 * run against `npm start` (server/start.ts in a child process, embedded engine, a free port): a create, spends
 * through automatic batching, a typed error (ConflictError SPENT), the SigV4 transport loading the credential chain
 * on first use, and direct invocation failing typed without the optional @aws-sdk/client-lambda. The installed tree
 * must hold none of the server's dependencies. Without the npm registry (or its cache) the test skips, saying why.
 */
import { execFile, spawn, type ChildProcess } from 'child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { promisify } from 'util';
import { makeTx, rootTx } from '../fixtures/txs';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const CLIENT = path.join(ROOT, 'packages', 'client');
/** the server's dependencies (and zod): none may be in the consumer's tree */
const FORBIDDEN = ['aws-cdk-lib', 'aerospike', 'better-sqlite3', 'wasmoon', 'zod'];
const NETWORK_ERRORS =
  /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|offline/i;

const versionOf = (name: string) =>
  (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

/** Every package directory under a node_modules tree (nested ones too), by package name. */
function installedPackages(dir: string, out = new Set<string>()): Set<string> {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const names = entry.name.startsWith('@')
      ? readdirSync(path.join(dir, entry.name)).map((n) => `${entry.name}/${n}`)
      : [entry.name];
    for (const name of names) {
      out.add(name);
      installedPackages(path.join(dir, name, 'node_modules'), out);
    }
  }
  return out;
}

/** The consumer's code: the same strict TypeScript is ESM as a .mts file (import) and CommonJS as a .cts (require). */
const CONSUMER = `import {
  awsClient,
  ConflictError,
  isApiError,
  lambdaClient,
  localClient,
  TransportError,
  type CreateResult,
  type ItemResult,
  type SpendResult,
} from '@bsv-utxo-store/client';
import { readFileSync } from 'node:fs';

interface Fixtures {
  root: { txid: string; hex: string };
  spenders: string[];
  rival: string;
}

async function main(): Promise<void> {
  const [url = 'http://127.0.0.1:8080', fixtureFile = 'fixtures.json'] = process.argv.slice(2);
  const f = JSON.parse(readFileSync(fixtureFile, 'utf8')) as Fixtures;
  const client = localClient(url, { batching: { lingerMs: 20 } });
  const created: CreateResult = await client.createTx(f.root.hex);

  // single calls, batched automatically into POST /v1/batch/spends
  const spent: SpendResult[] = await Promise.all(f.spenders.map((tx) => client.spend(tx)));
  const stats = client.batchers().map((b) => ({ ...b.stats }));

  let error: { name: string; code: string; spendingTxid: string | undefined; status: number } | undefined;
  try {
    await client.spend(f.rival);
  } catch (err) {
    if (err instanceof ConflictError && isApiError(err, 'SPENT')) {
      const code: 'SPENT' = err.code;
      error = { name: err.name, code, spendingTxid: err.spendingTxid, status: err.status };
    } else throw err;
  }
  const many: ItemResult<SpendResult>[] = await client.spendMany([f.rival]);

  // SigV4: the credential chain (here: the environment's keys) is imported on the first signature
  const signedTip: number = await awsClient({ apiUrl: url, region: 'eu-west-1', batching: false }).getChainTip();

  // direct invocation without the optional @aws-sdk/client-lambda: a typed error, nothing sent
  let direct: { name: string; sent: boolean; message: string } | undefined;
  try {
    await lambdaClient({ region: 'eu-west-1', functionNames: { status: 'utxo-store-status' }, retry: { attempts: 1 } })
      .getChainTip();
  } catch (err) {
    if (err instanceof TransportError) direct = { name: err.name, sent: err.sent, message: err.message };
    else throw err;
  }
  await client.close();
  console.log(
    JSON.stringify({
      created: created.txid,
      spent: spent.map((s) => s.spends.every((o) => o.status === 'OK')),
      stats,
      error,
      many: many.map((r) => (r.ok ? 'ok' : (r.error as Error).name)),
      signedTip,
      direct,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
`;

function fixtures(file: string, spenders: number): string {
  const root = rootTx(spenders);
  const txs = Array.from({ length: spenders }, (_, vout) => makeTx({ inputs: [{ parent: root, vout }] }));
  const rival = makeTx({ inputs: [{ parent: root, vout: 0 }] });
  writeFileSync(
    file,
    JSON.stringify({ root: { txid: root.txid, hex: root.hex }, spenders: txs.map((t) => t.hex), rival: rival.hex }),
  );
  return root.txid;
}

/** `npm start` on a free port with its data in dir; resolves with its URL. */
function startServer(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['server/start.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      UTXO_STORE: `embedded:${path.join(dir, 'utxo.db')}`,
      BLOB_STORE: `file:${path.join(dir, 'blobs')}`,
      SIGNAL_QUEUE: 'inline',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+?) /.exec(out);
      if (m) resolve({ url: m[1], child });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}`)));
  });
}

describe('the packed client, installed alone', () => {
  let scratch: string;
  let server: { url: string; child: ChildProcess } | undefined;

  beforeAll(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'packed-client-'));
  });

  afterAll(() => {
    server?.child.kill('SIGTERM');
    rmSync(scratch, { recursive: true, force: true });
  });

  test('compiles strictly, reaches a batched call, types its errors, and holds no server dependency', async () => {
    // the build (ESM, CommonJS, declarations), then npm pack without its prepack, which would build again after
    // checking the generated types (generated-api-types.test.ts checks those)
    const phases: string[] = [];
    let mark = Date.now();
    const lap = (name: string) => {
      phases.push(`${name} ${((Date.now() - mark) / 1000).toFixed(1)} s`);
      mark = Date.now();
    };
    await run(process.execPath, [path.join(CLIENT, 'scripts', 'build.mjs')], { cwd: CLIENT });
    lap('build');
    const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], {
      cwd: CLIENT,
    });
    const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    const shipped = files.map((f) => f.path);
    expect(shipped).toEqual(
      expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/esm/index.js', 'dist/cjs/index.d.ts']),
    );
    expect(shipped.filter((p) => !/^(dist\/|LICENSE$|README\.md$|package\.json$)/.test(p))).toEqual([]);

    const project = path.join(scratch, 'consumer');
    mkdirSync(project);
    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2),
    );
    try {
      await run(
        'npm',
        [
          'install',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
          '--no-package-lock',
          path.join(scratch, filename),
          `typescript@${versionOf('typescript')}`,
          `@types/node@${versionOf('@types/node')}`,
        ],
        { cwd: project, timeout: 120_000 },
      );
    } catch (err) {
      const text = `${(err as { stderr?: string }).stderr ?? ''} ${(err as Error).message}`;
      if (NETWORK_ERRORS.test(text)) {
        console.log(
          `SKIPPED the packed-client test: the npm registry is unreachable and not cached (${text.trim().slice(0, 300)})`,
        );
        return;
      }
      throw err;
    }
    lap('pack + install');

    const installed = installedPackages(path.join(project, 'node_modules'));
    expect(installed.has('@bsv-utxo-store/client')).toBe(true);
    expect(FORBIDDEN.filter((name) => installed.has(name))).toEqual([]);
    // the optional peer is not installed: a service that does not invoke directly does not get it
    expect(installed.has('@aws-sdk/client-lambda')).toBe(false);

    writeFileSync(path.join(project, 'esm.mts'), CONSUMER);
    writeFileSync(path.join(project, 'cjs.cts'), CONSUMER);
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022'],
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: false,
          outDir: 'out',
        },
        files: ['esm.mts', 'cjs.cts'],
      }),
    );
    const tsc = path.join(project, 'node_modules', 'typescript', 'bin', 'tsc');
    const compiled = await run(process.execPath, [tsc, '-p', project], { cwd: project }).then(
      () => 'compiled',
      (err: { stdout?: string; message: string }) => err.stdout || err.message,
    );
    expect(compiled).toBe('compiled');
    lap('tsc');
    // the CommonJS consumer calls require(), the ESM one import
    expect(readFileSync(path.join(project, 'out', 'cjs.cjs'), 'utf8')).toContain(`require("@bsv-utxo-store/client")`);
    expect(readFileSync(path.join(project, 'out', 'esm.mjs'), 'utf8')).toContain(`from '@bsv-utxo-store/client'`);

    server = await startServer(scratch);
    lap('npm start');
    const env = { ...process.env, AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' };
    for (const [file, spenders] of [
      ['esm.mjs', 12],
      ['cjs.cjs', 7],
    ] as const) {
      const fixtureFile = path.join(scratch, `${file}.json`);
      const rootTxid = fixtures(fixtureFile, spenders);
      const out = await run(process.execPath, [path.join(project, 'out', file), server.url, fixtureFile], {
        cwd: project,
        env,
      });
      const result = JSON.parse(out.stdout.trim().split('\n').pop() as string) as {
        created: string;
        spent: boolean[];
        stats: { batches: number; items: number }[];
        error: { name: string; code: string; status: number; spendingTxid?: string };
        many: string[];
        signedTip: number;
        direct: { name: string; sent: boolean; message: string };
      };
      expect(result.created).toBe(rootTxid);
      expect(result.spent).toEqual(Array(spenders).fill(true));
      // the spends went out in fewer requests than calls (one batch when they all fall in the linger window)
      const spendStats = result.stats.find((s) => s.items >= spenders);
      expect(spendStats).toBeDefined();
      expect(spendStats!.batches).toBeLessThan(spenders);
      expect(result.error).toMatchObject({ name: 'ConflictError', code: 'SPENT', status: 409 });
      expect(result.error.spendingTxid).toMatch(/^[0-9a-f]{64}$/);
      expect(result.many).toEqual(['ConflictError']);
      expect(typeof result.signedTip).toBe('number');
      expect(result.direct).toMatchObject({ name: 'TransportError', sent: false });
      expect(result.direct.message).toContain('npm install @aws-sdk/client-lambda');
    }
    lap('consumers');
    console.log(`packed client: ${phases.join(', ')}`);
  }, 300_000);
});
