/**
 * `npm run e2e` (docs/e2e.md): the app synthesised as `cdk synth` packages it, run as Lambda runs it against a real
 * Aerospike, and compared with `npm start` against the same engine.
 *
 *   AEROSPIKE_HOSTS=127.0.0.1:3200 npm run e2e    an Aerospike (8.1) with namespace `utxo` (as the stack's UTXO_STORE)
 *   ASD_BIN=/path/to/asd npm run e2e              starts the cluster stack's own conf and scripts on two local nodes
 *
 * Without either, or without a Node 22 binary (installed once into a cache), it prints why and exits 0.
 * E2E_ASSEMBLY=<cdk.out> reuses a synthesised assembly; E2E_PORT (default 4200) is the first of the loopback ports
 * used (fauxqs for S3 and SQS, one Runtime API per function from +10, npm start at +50); E2E_KEEP=1 keeps the work directory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../../cdk/bundling';
import { withDeadline } from '../../lib/engine/deadline';
import { commandQueuePolicy, setupCommandQueue } from '../../lib/engine/aerospike/connect';
import { loadConfig } from '../../lib/domain/config';
import { readAssembly, type Assembly } from './assembly';
import { EMULATOR_CREDENTIALS } from './aws-emulator';
import { findNode22 } from './node22';
import { startSupervisedCluster, type SupervisedCluster } from './node-supervisor';
import { runWatchdogScenario } from './watchdog-scenario';
import { LocalDeployment } from './local-deployment';
import {
  compareRuns,
  runScenario,
  unexpectedStatuses,
  scenarioTxs,
  VARIABLE_FIELDS,
  type Answer,
  type Step,
  type Target,
} from './scenario';
import { matchMethod, proxyEvent } from './rest-api';
import { checkEnvironment, checkModules, checkRoutes, functionNameOf } from './template-checks';

const failures: string[] = [];
const fail = (what: string) => {
  failures.push(what);
  console.log(`  FAIL ${what}`);
};
const ok = (what: string) => console.log(`  ok   ${what}`);

function skip(reason: string): never {
  console.log(`e2e SKIPPED: ${reason}`);
  process.exit(0);
}

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function synthesize(dir: string): Assembly {
  if (process.env.E2E_ASSEMBLY) return readAssembly(process.env.E2E_ASSEMBLY);
  const out = path.join(dir, 'cdk.out');
  console.log(`synthesizing the app (cdk synth -o ${out})...`);
  const run = spawnSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '-o', out], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
  });
  if (run.status !== 0) throw new Error(`cdk synth failed:\n${run.stderr}`);
  return readAssembly(out);
}

/** ms any one wait on the cluster may take here (truncation, its scans, the size read) before the run fails */
const CLUSTER_WAIT_MS = 30_000;

/**
 * Empties the sets both runs use (an earlier run's records would change the cleanup reports); answers the number of
 * nodes the cluster has (every node's `cluster_size`, which must agree).
 */
async function prepareCluster(
  hosts: string,
  namespace: string,
  sets: string[],
  functionEnv: Record<string, string>,
): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Aerospike = require('aerospike') as typeof import('aerospike');
  // the client's command queue is process-wide and set once, before any client connects: set it from the functions'
  // own settings, as the store's runtime will (the watchdog scenario builds one with them later in this process)
  const { aerospike } = loadConfig({ ...functionEnv, UTXO_STORE: `aerospike://${hosts}/${namespace}` });
  setupCommandQueue(
    Aerospike,
    commandQueuePolicy({
      hosts,
      namespace,
      maxConnsPerNode: aerospike.maxConnsPerNode,
      commandQueue: {
        maxCommandsInProcess: aerospike.maxCommandsInProcess,
        maxCommandsInQueue: aerospike.maxCommandsInQueue,
      },
    }),
  );
  const client = await withDeadline(
    Aerospike.connect({
      hosts: hosts
        .split(',')
        .map((h) => h.split(':'))
        .map(([addr, port]) => ({ addr, port: Number(port ?? 3000) })),
    }),
    CLUSTER_WAIT_MS,
    `connect to ${hosts}`,
  );
  try {
    // the server answers TIMEOUT when the truncation's metadata takes over a second to reach every node (seen on a
    // busy 2-core machine): the command is idempotent, so it is sent again
    for (const set of sets)
      for (let attempt = 1; ; attempt++) {
        try {
          await withDeadline(client.truncate(namespace, set, 0), CLUSTER_WAIT_MS, `truncate ${namespace}.${set}`);
          break;
        } catch (err) {
          if ((err as { code?: number }).code !== Aerospike.status.ERR_TIMEOUT || attempt === 5) throw err;
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    // truncation is asynchronous on the nodes: wait until a scan of each set is empty
    for (const set of sets)
      for (let i = 0; i < 50; i++) {
        const scan = client.scan(namespace, set).results();
        const records = await withDeadline(scan, CLUSTER_WAIT_MS, `scan ${namespace}.${set} after its truncation`);
        if (records.length === 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    const stats = await withDeadline(client.infoAll('statistics'), CLUSTER_WAIT_MS, 'read the cluster size');
    const sizes = new Set(stats.map((a) => Number(/(?:^|[\t;])cluster_size=(\d+)/.exec(a.info ?? '')?.[1])));
    if (sizes.size !== 1 || [...sizes].some((n) => !Number.isInteger(n) || n < 1))
      throw new Error(`the nodes at ${hosts} do not agree on their cluster size: ${[...sizes].join(', ')}`);
    return [...sizes][0];
  } finally {
    await client.close();
  }
}

/**
 * Review N9: a role flag from blockValidation's signer is taken through API Gateway (its integration invokes the
 * gateway alias, which the function sees in invokedFunctionArn), and refused in the same event sent with Invoke.
 */
async function checkGatewayAlias(d: LocalDeployment, spendHex: string): Promise<void> {
  const body = JSON.stringify({ tx: spendHex, ignoreLocked: true });
  const viaApi = await d.request('blockValidation', { method: 'POST', url: '/v1/spends', body });
  const refused = (text: string | undefined) => /"FIELD_NOT_ALLOWED"/.test(text ?? '');
  if (viaApi.status !== 403 && !refused(viaApi.body))
    ok(`blockValidation's ignoreLocked through API Gateway (the gateway alias) is taken (${viaApi.status})`);
  else fail(`blockValidation's ignoreLocked through API Gateway answered ${viaApi.status} ${viaApi.body}`);
  const match = matchMethod(d.api.methods, 'POST', '/v1/spends');
  if (typeof match === 'string') return fail(`POST /v1/spends: ${match}`);
  const forged = proxyEvent(d.api, match, { method: 'POST', url: '/v1/spends', body }, d.role('blockValidation'));
  const direct = (await d.invokeDirect('spend', 'validator', forged)) as { statusCode?: number; body?: string };
  if (direct.statusCode === 403 && refused(direct.body))
    ok('the same API Gateway event sent with Invoke (unqualified) is direct: ignoreLocked is 403 FIELD_NOT_ALLOWED');
  else fail(`a forged API Gateway event sent with Invoke answered ${JSON.stringify(direct)}`);
}

function deployedTarget(d: LocalDeployment): Target {
  return {
    name: 'functions (Node 22, as deployed)',
    async http(role, method, url, body) {
      const a = await d.request(role, { method, url, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: a.status, body: parse(a.body) };
    },
    async direct(fn, role, event) {
      const r = (await d.invokeDirect(fn, role, event)) as { statusCode: number; body?: unknown };
      return { status: r.statusCode, body: r.body };
    },
    async drainSignals() {
      await d.drainEventSources();
    },
    async scheduledCleanup() {
      const [report] = await d.runSchedules();
      return { status: 200, body: report };
    },
  };
}

async function startLocalServer(
  port: number,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), ['server/start.ts'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}):\n${output}`));
    });
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

function localTarget(url: string): Target {
  const http = async (method: string, p: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${url}${p}`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
    });
    return { status: res.status, body: parse(await res.text()) };
  };
  return {
    name: 'npm start (Node 20)',
    http: (_role, method, p, body) => http(method, p, body),
    // the local server has no Invoke API: the same route over HTTP
    async direct(_fn, _role, event) {
      const [method, template] = String(event.route).split(' ');
      const params = (event.pathParameters ?? {}) as Record<string, string>;
      const p = template.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(params[k]));
      return http(method, p, event.body);
    },
    async drainSignals() {},
    scheduledCleanup: () => http('POST', '/v1/cleanup', {}),
  };
}

/** Every explicit method of the REST API, called by the least role its IAM allows: it must reach its route. */
async function probeRoutes(d: LocalDeployment): Promise<void> {
  const roles = ['validator', 'blockValidation', 'admin'];
  const sample: Record<string, string> = { txid: '11'.repeat(32), vout: '0' };
  for (const m of d.api.methods.filter((x) => x.httpMethod !== 'ANY')) {
    const url =
      m.resourcePath.replace(/\{(\w+)\}/g, (_, k: string) => sample[k] ?? 'x') +
      (m.requiredQuery.length > 0 ? `?${m.requiredQuery.map((q) => `${q}=1`).join('&')}` : '');
    const body =
      m.requiredBody === undefined
        ? undefined
        : JSON.stringify(Object.fromEntries(m.requiredBody.map((k) => [k, null])));
    const label = `${m.httpMethod} ${m.resourcePath}`;
    let allowed: string | undefined;
    let denied: string | undefined;
    for (const role of roles) {
      const a = await d.request(role, { method: m.httpMethod, url, body });
      if (a.gatewayResponse === 'ACCESS_DENIED') {
        denied = role;
        continue;
      }
      allowed = role;
      const code = (parse(a.body) as { error?: { code?: string } } | undefined)?.error?.code;
      const fn = functionNameOf(d.api.stack, m.functionId);
      if (a.gatewayResponse) fail(`${label}: API Gateway answered ${a.gatewayResponse} to ${role}`);
      else if (code === 'ROUTE_NOT_FOUND' || code === 'METHOD_NOT_ALLOWED')
        fail(`${label}: the ${fn} function does not serve it (${a.status} ${code})`);
      else ok(`${label} -> ${fn} (${role}${denied ? `; ${denied} denied` : ''}): ${a.status}${code ? ` ${code}` : ''}`);
      break;
    }
    if (!allowed) fail(`${label}: no caller role may call it`);
  }
  const unknown = await d.request('admin', { method: 'GET', url: '/v1/nowhere' });
  if (unknown.status === 403)
    ok(`an unknown path is 403 from API Gateway for a signed caller (${unknown.gatewayResponse})`);
  else fail(`an unknown path answered ${unknown.status}`);
}

async function main(): Promise<void> {
  const hostsGiven = process.env.AEROSPIKE_HOSTS;
  const asd = process.env.ASD_BIN;
  if (!hostsGiven && !asd)
    skip(
      'no Aerospike: set AEROSPIKE_HOSTS (namespace utxo) or ASD_BIN (an asd binary to start the cluster stack conf with)',
    );
  const node22 = findNode22({ install: process.env.E2E_NO_DOWNLOAD !== '1' });
  if (!node22.ok) skip(`no Node 22 binary: ${node22.reason}`);
  console.log(`Node 22: ${node22.node} (${node22.version})`);

  const work = mkdtempSync(path.join(process.env.E2E_DIR ?? tmpdir(), 'utxo-e2e-'));
  const basePort = Number(process.env.E2E_PORT ?? 4200);
  let cluster: SupervisedCluster | undefined;
  let deployment: LocalDeployment | undefined;
  let server: ChildProcess | undefined;
  let finished = false;
  try {
    const assembly = synthesize(work);
    const clusterStack = assembly.stacks.find(
      (s) => s.template.Resources && Object.values(s.template.Resources).some((r) => r.Type === 'AWS::EC2::Instance'),
    );
    let hosts = hostsGiven;
    if (!hosts) {
      // as many nodes as the cluster stack has instances: the functions' AEROSPIKE_CLUSTER_SIZE is that count
      const nodeCount = Object.values(clusterStack!.template.Resources).filter(
        (r) => r.Type === 'AWS::EC2::Instance',
      ).length;
      console.log(
        `starting the cluster stack conf on ${nodeCount} local nodes (with their watchdog and start hook)...`,
      );
      cluster = await startSupervisedCluster({
        stack: clusterStack!,
        asd: asd!,
        dir: path.join(work, 'cluster'),
        basePort: Number(process.env.E2E_CLUSTER_PORT ?? 3200),
        nodes: nodeCount,
        fileSize: 1024 * 1024 * 1024,
        // what systemd and the watchdog did to each node (a kill, a wiped start), as it happens
        log: (l) => console.log(l),
      });
      hosts = cluster.hosts;
      console.log(`  cluster ${hosts}; conf substitutions: ${cluster.nodes[0].substitutions.join('; ')}`);
    }

    deployment = new LocalDeployment({
      assembly,
      node: node22.node,
      aerospikeHosts: hosts,
      workDir: path.join(work, 'functions'),
      basePort,
    });
    const d = deployment;

    console.log('template checks:');
    const problems = [
      ...checkEnvironment(assembly.stacks, d.standIns),
      ...checkRoutes(assembly.stacks, d.standIns),
      ...checkModules(
        Object.fromEntries(d.functions.map((f) => [functionNameOf(f.stack, f.logicalId) ?? f.logicalId, f.codeDir])),
        d.functions[0].layerDirs[0],
      ),
    ];
    problems.forEach(fail);
    if (problems.length === 0) ok('environment, routes and modules of every function');

    const create = d.functions.find((f) => functionNameOf(f.stack, f.logicalId) === 'create')!;
    const namespace = /^aerospike:\/\/[^/]+\/([^?]+)/.exec(create.environment.UTXO_STORE)![1];
    const deployedSet = /[?&]set=([^&]+)/.exec(create.environment.UTXO_STORE)?.[1] ?? 'utxos';
    const localSet = 'e2e_npm_start';
    const clusterSize = await prepareCluster(hosts, namespace, [deployedSet, localSet], create.environment);
    // The spend guard answers every spend 503 while the cluster has another size than AEROSPIKE_CLUSTER_SIZE (the
    // stack's node count): a given cluster of another size runs the functions with its own size, said here.
    const expected = Number(create.environment.AEROSPIKE_CLUSTER_SIZE ?? 0);
    if (expected !== 0 && expected !== clusterSize) {
      console.log(
        `  the cluster at ${hosts} has ${clusterSize} node(s), the stack's functions expect ${expected} ` +
          `(nodeCount, AEROSPIKE_CLUSTER_SIZE): running them and npm start with AEROSPIKE_CLUSTER_SIZE=${clusterSize}`,
      );
      for (const f of d.functions) {
        if (f.environment.AEROSPIKE_CLUSTER_SIZE !== undefined) {
          f.environment.AEROSPIKE_CLUSTER_SIZE = String(clusterSize);
        }
      }
    } else {
      console.log(`  the cluster at ${hosts} has ${clusterSize} node(s), as the functions expect`);
    }

    await d.start();
    for (const f of d.functions)
      console.log(`  ${f.name}: ${f.handler} ${f.runtime}, ${f.memoryMb} MB, ${f.timeoutSeconds} s`);

    console.log('routes of the REST API (every explicit method, least allowed role):');
    await probeRoutes(d);

    // npm start with the functions' settings, on the same engine (its own set), fauxqs's S3 and inline signals
    const settings = Object.fromEntries(
      Object.entries(create.environment).filter(
        ([k]) => !['UTXO_STORE', 'BLOB_STORE', 'SIGNAL_QUEUE', 'UTXO_UDF_PATH', 'NODE_OPTIONS'].includes(k),
      ),
    );
    const blobBucket = /^s3:\/\/([^/]+)/.exec(create.environment.BLOB_STORE)![1];
    const started = await startLocalServer(basePort + 50, {
      ...settings,
      UTXO_STORE: `aerospike://${hosts}/${namespace}?set=${localSet}`,
      BLOB_STORE: `s3://${blobBucket}/npm-start`,
      SIGNAL_QUEUE: 'inline',
      CLEANUP_INTERVAL_SECONDS: '0',
      AWS_ENDPOINT_URL_S3: d.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
    });
    server = started.child;

    const txs = scenarioTxs();
    console.log('scenario on the functions...');
    const deployedSteps = await runScenario(deployedTarget(d), txs);
    console.log('scenario on npm start...');
    const localSteps = await runScenario(localTarget(started.url), txs);
    report(deployedSteps, localSteps);

    console.log('deployment-only checks:');
    const sent = d.sqsCalls.filter((c) => c === 'SendMessageBatch').length;
    if (sent > 0) ok(`the functions sent ${sent} SendMessageBatch calls to fauxqs's SQS; the consumer drained them`);
    else fail('no function sent a signal to the queue');
    const leftover = [...new Set(d.sqsCalls)];
    ok(`SQS operations used: ${leftover.join(', ')}`);
    const denied = (await d.invokeDirect('admin', 'validator', { route: 'GET /v1/chain/tip' })) as {
      accessDenied?: string;
    };
    if (denied.accessDenied) ok(`direct invocation without a grant is refused (${denied.accessDenied})`);
    else fail('the validator role may invoke the admin function directly');
    const misrouted = (await d.invokeDirect('spend', 'validator', {
      route: 'GET /v1/txs/{txid}',
      pathParameters: { txid: txs.parent.txid },
    })) as { statusCode: number; body?: { error?: { code?: string; details?: { function?: string } } } };
    if (misrouted.statusCode === 404 && misrouted.body?.error?.details?.function === 'get')
      ok('a direct invocation of a route another function serves is 404 ROUTE_NOT_FOUND naming it');
    else fail(`misrouted direct invocation answered ${JSON.stringify(misrouted)}`);
    await checkGatewayAlias(d, txs.spendOne.hex);
    const cold = d.invocations.filter((i) => i.coldStart);
    const notRun = d.functions.filter((f) => !d.invocations.some((i) => i.fn === f.logicalId));
    if (notRun.length > 0) fail(`functions never invoked: ${notRun.map((f) => f.name).join(', ')}`);
    else ok(`every function ran (${d.invocations.length} invocations, ${cold.length} cold starts)`);
    for (const c of cold)
      console.log(`    cold start ${c.fn} (${c.trigger}): ${Math.round(c.ms)} ms to the first answer`);

    // the node scripts' watchdog and start-up rule (decision 0007), on the cluster started from them
    if (!cluster) console.log('watchdog scenario SKIPPED: the cluster was given (AEROSPIKE_HOSTS), not started here');
    else if (cluster.nodes.length < 3)
      console.log(
        `watchdog scenario SKIPPED: ${cluster.nodes.length} node(s), the scenario needs a majority without one`,
      );
    else {
      console.log('watchdog scenario (a node paused, then another restarted by systemd):');
      const problems = await runWatchdogScenario({ cluster, namespace, settings, log: (l) => console.log(l) });
      problems.forEach(fail);
      if (problems.length === 0)
        ok('the watchdog killed the paused node, its start wiped it, it rejoined; spends acknowledged');
    }
    finished = true;
  } finally {
    server?.kill('SIGTERM');
    await deployment?.stop();
    await cluster?.stop();
    if (process.env.E2E_KEEP === '1' || failures.length > 0 || !finished) console.log(`work directory kept: ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    console.log(`e2e FAILED: ${failures.length} problem(s)`);
    process.exit(1);
  }
  console.log('e2e passed');
}

function report(deployed: Step[], local: Step[]): void {
  console.log(`comparison (${deployed.length} steps; normalized: ${VARIABLE_FIELDS.join('; ')}):`);
  const diffs = compareRuns(deployed, local);
  for (const p of unexpectedStatuses(deployed)) fail(`functions: ${p}`);
  for (const p of unexpectedStatuses(local)) fail(`npm start: ${p}`);
  for (const s of deployed) {
    const d = diffs.find((x) => x.step === s.name);
    if (d) fail(`${s.name}: functions ${JSON.stringify(d.left)} != npm start ${JSON.stringify(d.right)}`);
    else ok(`${s.name}: ${s.answer.status}`);
  }
}

main().catch((err: unknown) => {
  console.error('e2e FAILED:', err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
