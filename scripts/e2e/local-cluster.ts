/**
 * The Aerospike cluster of the synthesised cluster stack, run locally: the node scripts and the conf are taken from
 * the template's SSM parameters (what the bootstrap fetches), the device script records stand-in devices (files
 * under /tmp linked as NVMe instance-store ids), the apply-config script writes aerospike.conf from the conf
 * parameter with those devices (`aws ssm get-parameter` answered from the template), and only then is the written
 * conf localized: loopback addresses and this run's ports instead of the nodes' DNS names and 3000-3002, file
 * storage instead of raw devices, log and work directories under the run's directory. Each node is the given `asd`
 * binary (ASD_BIN) in the foreground. What was substituted is returned, for the report.
 *
 * No info port is configured: 8.1 ignores `network { info { } }` as obsolete.
 *
 *   npx tsx e2e/local-cluster.ts start   starts the nodes (ASD_BIN, E2E_CLUSTER_DIR, E2E_CLUSTER_PORT), prints hosts
 *   npx tsx e2e/local-cluster.ts stop    stops the nodes it started (their pid files)
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import {
  AEROSPIKE_FABRIC_PORT,
  AEROSPIKE_HEARTBEAT_PORT,
  AEROSPIKE_LOG,
  AEROSPIKE_SERVICE_PORT,
  DEVICES_FILE,
} from '../../cdk/aerospike-scripts';
import { resourcesOfType, type StackArtifact } from './assembly';

export interface LocalClusterOptions {
  /** the cluster stack of the assembly */
  stack: StackArtifact;
  asd: string;
  dir: string;
  /** node i uses basePort + 10*i .. +3 (service, fabric, heartbeat, info) */
  basePort: number;
  nodes: number;
  /** bytes of each node's data file */
  fileSize?: number;
}

export interface NodeSetup {
  index: number;
  conf: string;
  confFile: string;
  servicePort: number;
  dir: string;
}

export class LocalClusterError extends Error {
  readonly code = 'E2E_CLUSTER';
  constructor(message: string) {
    super(message);
    this.name = 'LocalClusterError';
  }
}

/**
 * The SSM parameter values of the cluster stack by name suffix (conf, aerospike-devices, ...), and each parameter
 * resource's metadata by logical id (`meta:<id>`: the pins the node scripts check, cdk/node-pins.ts).
 */
export function clusterParameters(stack: StackArtifact): Map<string, string> {
  const out = new Map<string, string>();
  for (const { id, resource } of resourcesOfType({ stacks: [stack] }, 'AWS::SSM::Parameter')) {
    const name = resource.Properties?.Name;
    const value = resource.Properties?.Value;
    if (typeof name === 'string' && typeof value === 'string') out.set(name.slice(name.lastIndexOf('/') + 1), value);
    if (typeof name === 'string') out.set(`name:${name.slice(name.lastIndexOf('/') + 1)}`, name);
    const metadata = (resource as { Metadata?: unknown }).Metadata;
    if (metadata !== undefined) out.set(`meta:${id}`, JSON.stringify(metadata));
  }
  return out;
}

/**
 * Runs a script from the template with bash, `aws` answering `ssm get-parameter` from `params` (as the CLI's text
 * output: the value and a newline) and `cloudformation describe-stack-resource` with the parameter resources'
 * metadata, so the scripts check the pins as on a node.
 */
export function runScript(
  work: string,
  script: string,
  args: string[],
  params: Map<string, string>,
  env: Record<string, string>,
  withStderr = false,
): string {
  const bin = path.join(work, 'bin');
  const paramDir = path.join(work, 'params');
  const metaDir = path.join(work, 'meta');
  mkdirSync(bin, { recursive: true });
  mkdirSync(paramDir, { recursive: true });
  mkdirSync(metaDir, { recursive: true });
  for (const [k, v] of params)
    if (k.startsWith('meta:')) writeFileSync(path.join(metaDir, k.slice('meta:'.length)), `${v}\n`);
    else if (!k.startsWith('name:')) writeFileSync(path.join(paramDir, k), v);
  writeFileSync(
    path.join(bin, 'aws'),
    '#!/bin/bash\n' +
      `if [ "$1 $2" = "cloudformation describe-stack-resource" ]; then\n` +
      `  while [ "$1" != --logical-resource-id ]; do shift; done; cat "${metaDir}/$2"; exit 0\nfi\n` +
      `[ "$1 $2" = "ssm get-parameter" ] || { echo "aws stand-in: only ssm get-parameter ($*)" >&2; exit 3; }\n` +
      `while [ "$1" != --name ]; do shift; done\ncat "${paramDir}/$(basename "$2")"; echo\n`,
  );
  chmodSync(path.join(bin, 'aws'), 0o755);
  const file = path.join(work, `script-${args[0] ?? 'run'}.sh`);
  writeFileSync(file, script);
  const run = spawnSync('bash', [file, ...args], {
    encoding: 'utf8',
    env: { PATH: `${bin}:/usr/bin:/bin`, REGION: 'us-east-1', ...env },
  });
  if (run.status !== 0) throw new LocalClusterError(`${path.basename(file)} failed: ${run.stderr || run.stdout}`);
  return withStderr ? `${run.stdout}${run.stderr}` : run.stdout;
}

/**
 * The conf as apply-config wrote it, localized for node `index`. Every substitution is a named rule; a rule that
 * matches nothing is an error (the conf changed shape, and this must be looked at again).
 */
export function localizeConf(
  conf: string,
  o: { index: number; nodes: number; basePort: number; dir: string; fileSize: number },
): {
  conf: string;
  substitutions: string[];
} {
  const port = (i: number, k: number) => o.basePort + 10 * i + k;
  const subs: string[] = [];
  let out = conf;
  const rule = (what: string, re: RegExp, replace: (m: string, ...g: string[]) => string) => {
    if (!re.test(out)) throw new LocalClusterError(`localizing aerospike.conf: no ${what} (${re})`);
    out = out.replace(re, replace as (m: string) => string);
    subs.push(what);
  };
  rule(
    'log file',
    new RegExp(`file ${AEROSPIKE_LOG.replace(/\//g, '\\/')} \\{`),
    () => `file ${path.join(o.dir, 'aerospike.log')} {`,
  );
  rule(
    'service: work and pid directories',
    /^service \{\n/m,
    (m) => `${m}    work-directory ${path.join(o.dir, 'work')}\n    pidfile ${path.join(o.dir, 'asd.pid')}\n`,
  );
  rule(
    'service address: loopback, advertised as such',
    /(\n {4}service \{\n) {8}address any\n/,
    (_m, head: string) => `${head}        address 127.0.0.1\n        access-address 127.0.0.1\n`,
  );
  rule('service port', new RegExp(`port ${AEROSPIKE_SERVICE_PORT}\\n`), () => `port ${port(o.index, 0)}\n`);
  rule(
    'heartbeat: loopback address and port',
    new RegExp(`(mode mesh\\n) {8}port ${AEROSPIKE_HEARTBEAT_PORT}\\n`),
    (_m, head: string) => `${head}        address 127.0.0.1\n        port ${port(o.index, 2)}\n`,
  );
  rule('mesh seeds: the local nodes', /( {8}mesh-seed-address-port \S+ \d+\n)+/, () =>
    Array.from({ length: o.nodes }, (_, i) => `        mesh-seed-address-port 127.0.0.1 ${port(i, 2)}\n`).join(''),
  );
  rule(
    'fabric: loopback address and port',
    new RegExp(`(fabric \\{\\n) {8}port ${AEROSPIKE_FABRIC_PORT}\\n`),
    (_m, head: string) => `${head}        address 127.0.0.1\n        port ${port(o.index, 1)}\n`,
  );
  // the server package's install creates /opt/aerospike/usr/udf/lua; the conf relies on that default
  rule(
    'UDF directory (the package install creates the default one)',
    /^logging \{/m,
    (m) => `mod-lua {\n    user-path ${path.join(o.dir, 'udf')}\n}\n${m}`,
  );
  rule(
    'devices: files of the given size',
    /( {8}device (\S+)\n)+/,
    (m) =>
      m
        .trim()
        .split('\n')
        .map((l) => `        file ${l.trim().split(/\s+/)[1]}\n`)
        .join('') + `        filesize ${Math.round(o.fileSize / 1024 / 1024)}M\n`,
  );
  return { conf: out, substitutions: subs };
}

/** Node i's conf: device script `record` on stand-in devices, apply-config from the template's parameters, localized. */
export function prepareNode(o: LocalClusterOptions, index: number): NodeSetup & { substitutions: string[] } {
  const params = clusterParameters(o.stack);
  for (const need of ['conf', 'aerospike-devices', 'aerospike-apply-config'])
    if (!params.has(need)) throw new LocalClusterError(`the cluster stack has no SSM parameter …/${need}`);
  const dir = path.join(o.dir, `node${index}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'work', 'smd'), { recursive: true });
  mkdirSync(path.join(dir, 'udf'), { recursive: true });
  mkdirSync(path.join(dir, 'by-id'), { recursive: true });
  const fileSize = o.fileSize ?? 2 * 1024 * 1024 * 1024;
  // the instance-store device, as udev names it; the file behind it is what the node writes
  const data = path.join(dir, 'data.dat');
  closeSync(openSync(data, 'w'));
  symlinkSync(data, path.join(dir, 'by-id', `nvme-Amazon_EC2_NVMe_Instance_Storage_LOCAL${index}`));
  const devicesFile = path.join(dir, 'devices.list');
  runScript(dir, params.get('aerospike-devices')!, ['record'], params, {
    BYID: path.join(dir, 'by-id'),
    DEVICES_FILE: devicesFile,
  });
  // apply-config reads the recorded list at its fixed path: the one substitution in the script itself
  const apply = params.get('aerospike-apply-config')!.split(DEVICES_FILE).join(devicesFile);
  runScript(dir, apply, [], params, { CONF_DIR: dir });
  const written = readFileSync(path.join(dir, 'aerospike.conf'), 'utf8');
  // the by-id link stands for the device; the node gets the file itself
  const { conf, substitutions } = localizeConf(
    written.split(path.join(dir, 'by-id', `nvme-Amazon_EC2_NVMe_Instance_Storage_LOCAL${index}`)).join(data),
    {
      index,
      nodes: o.nodes,
      basePort: o.basePort,
      dir,
      fileSize,
    },
  );
  const confFile = path.join(dir, 'aerospike.local.conf');
  writeFileSync(confFile, conf);
  return { index, conf, confFile, servicePort: o.basePort + 10 * index, dir, substitutions };
}

export function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > until) reject(new LocalClusterError(`nothing listens on 127.0.0.1:${port}`));
        else setTimeout(attempt, 250);
      });
    };
    attempt();
  });
}

export interface RunningCluster {
  hosts: string;
  nodes: (NodeSetup & { substitutions: string[]; pid: number })[];
  stop(): Promise<void>;
}

/** Starts every node (asd in the foreground, detached so that `stop` by pid file works across processes). */
export async function startLocalCluster(o: LocalClusterOptions): Promise<RunningCluster> {
  if (!existsSync(o.asd)) throw new LocalClusterError(`no Aerospike server binary at ${o.asd}`);
  const nodes: RunningCluster['nodes'] = [];
  for (let i = 0; i < o.nodes; i++) {
    const setup = prepareNode(o, i);
    const log = openSync(path.join(setup.dir, 'asd.out'), 'a');
    const child = spawn(o.asd, ['--config-file', setup.confFile, '--foreground'], {
      detached: true,
      stdio: ['ignore', log, log],
    });
    child.unref();
    writeFileSync(path.join(setup.dir, 'e2e.pid'), String(child.pid));
    nodes.push({ ...setup, pid: child.pid! });
  }
  try {
    for (const n of nodes) await waitForPort(n.servicePort, 60_000);
  } catch (err) {
    const logs = nodes.map(
      (n) =>
        `${n.dir}/aerospike.log:\n${tail(path.join(n.dir, 'aerospike.log'))}\n${tail(path.join(n.dir, 'asd.out'))}`,
    );
    await stopNodes(nodes.map((n) => n.pid));
    throw new LocalClusterError(`${(err as Error).message}\n${logs.join('\n')}`);
  }
  return {
    hosts: nodes.map((n) => `127.0.0.1:${n.servicePort}`).join(','),
    nodes,
    stop: () => stopNodes(nodes.map((n) => n.pid)),
  };
}

export function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(none)';
  }
}

export async function stopNodes(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  const until = Date.now() + 20_000;
  for (const pid of pids) {
    while (Date.now() < until) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** The cluster stack synthesised in-process (it has no assets to bundle). */
export function synthesizedClusterStack(): StackArtifact {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { App } = require('aws-cdk-lib') as typeof import('aws-cdk-lib');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildApp } = require('../../cdk/app') as typeof import('../../cdk/app');
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const { cluster } = buildApp(app);
  const artifact = app.synth().getStackArtifact(cluster.artifactId);
  return { name: artifact.stackName, template: artifact.template as StackArtifact['template'] };
}

async function cli(command: string | undefined): Promise<void> {
  const dir = process.env.E2E_CLUSTER_DIR ?? '/tmp/bsv-utxo-store-cluster';
  if (command === 'stop') {
    const pids = [0, 1]
      .map((i) => path.join(dir, `node${i}`, 'e2e.pid'))
      .filter((f) => existsSync(f))
      .map((f) => Number(readFileSync(f, 'utf8')));
    await stopNodes(pids);
    console.log(`stopped ${pids.length} node(s)`);
    return;
  }
  if (command !== 'start' || !process.env.ASD_BIN)
    throw new LocalClusterError(
      'usage: ASD_BIN=<asd> npx tsx e2e/local-cluster.ts start | stop (E2E_CLUSTER_DIR, E2E_CLUSTER_PORT)',
    );
  const cluster = await startLocalCluster({
    stack: synthesizedClusterStack(),
    asd: process.env.ASD_BIN,
    dir,
    basePort: Number(process.env.E2E_CLUSTER_PORT ?? 3200),
    nodes: 2,
    fileSize: 1024 * 1024 * 1024,
  });
  console.log(`AEROSPIKE_HOSTS=${cluster.hosts} AEROSPIKE_NAMESPACE=utxo (conf: ${cluster.nodes[0].confFile})`);
}

if (require.main === module)
  cli(process.argv[2]).catch((err: unknown) => {
    console.error((err as Error).message);
    process.exit(1);
  });
