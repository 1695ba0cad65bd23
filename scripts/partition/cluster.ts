/**
 * A real 3-node Aerospike cluster, each node in its own network namespace, for the partition experiment.
 *
 * Network (every name starts with the prefix, every address is in SUBNET; created here, removed by teardown):
 *   root namespace: bridge `<prefix>br` 10.19.0.1/24 (the clients run here and reach every node through it)
 *   node i:         namespace `<prefix>-n<i>`, veth `<prefix>v<i>` (bridge side) / `<prefix>p<i>` (node side),
 *                   address 10.19.0.1<i>, Aerospike on its default ports 3000-3002
 * Partitions are blackhole routes inside the node namespaces (`ip route add blackhole <peer>/32`): packets between
 * the two sides are dropped silently, as on a cut network link, while the bridge address (the clients) stays
 * reachable. No iptables/nft needed: only iproute2.
 *
 * Each node's aerospike.conf is the deployment's (cdk/aerospike-scripts.ts renderAerospikeConf with the settings of
 * cdk/config.ts), with the addresses substituted, the log, UDF and data paths under the run directory, and the
 * instance-store device replaced by a file of the same storage engine (a restart keeps the data, as on EC2).
 */
import { execFileSync, spawn, type ChildProcess } from 'child_process';
import { existsSync, mkdirSync, writeFileSync } from 'fs';
import { Socket } from 'net';
import * as path from 'path';
import { DEVICES_PLACEHOLDER, renderAerospikeConf, type ConfSettings } from '../../cdk/aerospike-scripts';

export const SUBNET_PREFIX = '10.19.0';
export const BRIDGE_ADDRESS = `${SUBNET_PREFIX}.1`;
export const SERVICE_PORT = 3000;
/** Debian's libfaketime (package faketime), multi-threaded variant: the clock-skew nemesis's node */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

export interface NodeSpec {
  index: number;
  name: string;
  netns: string;
  address: string;
  /** node-id, fixed so that the principal (the highest id) is known: node 3 */
  nodeId: string;
  dir: string;
}

export interface ClusterOptions {
  asdBin: string;
  prefix: string;
  workDir: string;
  /** the deployment's conf settings; seeds are replaced by the node addresses */
  conf: ConfSettings;
  /** extra lines per conf section (the settings under test), e.g. { namespace: ['migrate-fill-delay 0'] } */
  extra?: { service?: string[]; namespace?: string[]; heartbeat?: string[] };
  /** the /24 the nodes and the bridge use (default SUBNET_PREFIX: 10.19.0) */
  subnet?: string;
  /** file size of each node's data file, MiB */
  fileSizeMb?: number;
  nodes?: number;
  log?: (line: string) => void;
  /** one node's clock offset (libfaketime's `faketime -f`, e.g. '+10s'): the clock-skew nemesis */
  skew?: { node: number; offset: string };
  /**
   * the service also on 127.0.0.1 inside each node's namespace, as `address any` serves it on a node: the tools the
   * node scripts call without -h (asinfo, asbackup, asrestore: 127.0.0.1:3000) reach their node there (the drill)
   */
  loopbackService?: boolean;
}

/** Why the harness cannot run here (null: it can): no binary, not root, no `ip netns`. */
export function preconditions(env: NodeJS.ProcessEnv = process.env): string | null {
  const bin = env.ASD_BIN;
  if (!bin) return 'ASD_BIN is not set (the path of an Aerospike server binary, asd)';
  if (!existsSync(bin)) return `ASD_BIN=${bin} does not exist`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'not root: network namespaces need root (CAP_NET_ADMIN)';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'pipe' });
  } catch {
    return '`ip netns` is not available (iproute2)';
  }
  return null;
}

function sh(args: string[], opts: { ignoreError?: boolean } = {}): string {
  try {
    return execFileSync(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } catch (err) {
    if (opts.ignoreError) return '';
    const e = err as { stderr?: Buffer };
    throw new Error(`${args.join(' ')}: ${e.stderr?.toString().trim() ?? String(err)}`, { cause: err });
  }
}

const inNs = (netns: string, args: string[]): string[] => ['ip', 'netns', 'exec', netns, ...args];

/** The node's conf: the deployment's, addresses and paths substituted. Exported for tests. */
export function nodeConf(o: ClusterOptions, node: NodeSpec, all: NodeSpec[]): string {
  const base = renderAerospikeConf({ ...o.conf, seeds: all.map((n) => n.address) });
  const extra = o.extra ?? {};
  const out: string[] = [];
  let section = '';
  for (const line of base.split('\n')) {
    const t = line.trim();
    if (line === DEVICES_PLACEHOLDER) {
      out.push(`        file ${path.join(node.dir, 'data.dat')}`, `        filesize ${o.fileSizeMb ?? 1024}M`);
      continue;
    }
    if (t.startsWith('file /') && section === 'logging') {
      out.push(`    file ${path.join(node.dir, 'aerospike.log')} {`);
      continue;
    }
    if (t === 'address any') {
      out.push(`        address ${node.address}`, `        access-address ${node.address}`);
      if (o.loopbackService) out.push('        address 127.0.0.1');
      continue;
    }
    out.push(line);
    if (t === 'service {' && section === '') {
      section = 'service';
      out.push(
        `    node-id ${node.nodeId}`,
        `    run-as-daemon false`,
        `    pidfile ${path.join(node.dir, 'asd.pid')}`,
        `    work-directory ${path.join(node.dir, 'work')}`,
        ...(extra.service ?? []).map((l) => `    ${l}`),
      );
    } else if (t === 'logging {') section = 'logging';
    else if (t === 'network {') section = 'network';
    else if (t === 'heartbeat {') {
      section = 'heartbeat';
      out.push(`        address ${node.address}`, ...(extra.heartbeat ?? []).map((l) => `        ${l}`));
    } else if (t === 'fabric {') {
      section = 'fabric';
      out.push(`        address ${node.address}`);
    } else if (t.startsWith('namespace ')) {
      section = 'namespace';
      out.push(...(extra.namespace ?? []).map((l) => `    ${l}`));
    }
  }
  out.push('mod-lua {', `    user-path ${path.join(node.dir, 'udf')}`, '}', '');
  return out.join('\n');
}

export class Cluster {
  readonly nodes: NodeSpec[];
  private readonly procs = new Map<number, ChildProcess>();
  private readonly cuts: { netns: string; peer: string }[] = [];
  /** namespaces holding the fabric cut's nft table */
  private readonly fabricCuts: string[] = [];
  /** nodes the harness is stopping (a watchdog drops what it observes of them, as of a unit systemd is stopping) */
  private readonly stoppingNodes = new Set<number>();
  /** how many times each node was started (a watchdog's observation is of one start) */
  readonly starts = new Map<number, number>();
  /** called when a node's asd exits (after it is forgotten) */
  onExit?: (index: number, code: number | null, signal: NodeJS.Signals | null) => void;
  private readonly log: (line: string) => void;

  constructor(private readonly o: ClusterOptions) {
    const n = o.nodes ?? 3;
    this.log = o.log ?? ((l) => console.log(l));
    this.nodes = Array.from({ length: n }, (_, k) => {
      const index = k + 1;
      return {
        index,
        name: `n${index}`,
        netns: `${o.prefix}-n${index}`,
        address: `${o.subnet ?? SUBNET_PREFIX}.${10 + index}`,
        nodeId: `a${index}`,
        dir: path.join(o.workDir, `n${index}`),
      };
    });
  }

  /** Client namespaces (az1, az2, ...): clients placed in an availability zone of their own, on the same bridge. */
  clientNetns(zone: number): { netns: string; address: string } {
    return { netns: `${this.o.prefix}-az${zone}`, address: `${this.o.subnet ?? SUBNET_PREFIX}.${20 + zone}` };
  }

  get hosts(): string {
    return this.nodes.map((n) => `${n.address}:${SERVICE_PORT}`).join(',');
  }

  node(index: number): NodeSpec {
    const n = this.nodes.find((x) => x.index === index);
    if (!n) throw new Error(`no node ${index}`);
    return n;
  }

  /** Bridge, namespaces, veths, addresses. Removes leftovers of an earlier run with the same prefix first. */
  setUpNetwork(): void {
    this.tearDownNetwork();
    const br = `${this.o.prefix}br`;
    sh(['ip', 'link', 'add', br, 'type', 'bridge']);
    sh(['ip', 'addr', 'add', `${this.o.subnet ? `${this.o.subnet}.1` : BRIDGE_ADDRESS}/24`, 'dev', br]);
    sh(['ip', 'link', 'set', br, 'up']);
    for (const n of this.nodes)
      attachNamespace(br, n.netns, `${this.o.prefix}v${n.index}`, `${this.o.prefix}p${n.index}`, n.address);
    // two client zones: az1 (the clients beside node 1), az2 (the others); az-isolation cuts them apart
    for (const zone of [1, 2]) {
      const z = this.clientNetns(zone);
      attachNamespace(br, z.netns, `${this.o.prefix}z${zone}`, `${this.o.prefix}c${zone}`, z.address);
    }
  }

  tearDownNetwork(): void {
    for (const n of this.nodes) {
      sh(['ip', 'netns', 'del', n.netns], { ignoreError: true });
      sh(['ip', 'link', 'del', `${this.o.prefix}v${n.index}`], { ignoreError: true });
    }
    for (const zone of [1, 2]) {
      sh(['ip', 'netns', 'del', this.clientNetns(zone).netns], { ignoreError: true });
      sh(['ip', 'link', 'del', `${this.o.prefix}z${zone}`], { ignoreError: true });
    }
    sh(['ip', 'link', 'del', `${this.o.prefix}br`], { ignoreError: true });
  }

  /** Starts node `index`: `fresh` removes its whole directory, `wipe` its data file only (it starts empty). */
  start(index: number, fresh = false, wipe = false): void {
    const n = this.node(index);
    if (fresh) sh(['rm', '-rf', n.dir]);
    if (wipe) sh(['rm', '-f', path.join(n.dir, 'data.dat')]);
    this.starts.set(index, (this.starts.get(index) ?? 0) + 1);
    for (const d of [n.dir, path.join(n.dir, 'work'), path.join(n.dir, 'udf'), path.join(n.dir, 'work', 'smd')])
      mkdirSync(d, { recursive: true });
    const confPath = path.join(n.dir, 'aerospike.conf');
    writeFileSync(confPath, nodeConf(this.o, n, this.nodes));
    const asd = [this.o.asdBin, '--config-file', confPath, '--foreground'];
    // libfaketime preloaded through env, which execs asd (the faketime wrapper forks: killing it left asd running)
    const skewed =
      this.o.skew?.node === index ? ['env', `LD_PRELOAD=${LIBFAKETIME}`, `FAKETIME=${this.o.skew.offset}`] : [];
    const child = spawn('ip', ['netns', 'exec', n.netns, ...skewed, ...asd], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: false,
    });
    child.stderr?.on('data', (d: Buffer) => {
      const text = d.toString().trim();
      if (text) this.log(`[${n.name} stderr] ${text.slice(0, 500)}`);
    });
    child.on('exit', (code, signal) => {
      if (this.procs.get(index) === child) {
        this.procs.delete(index);
        this.stoppingNodes.delete(index);
        this.log(`[${n.name}] asd exited (code ${code}, signal ${signal})`);
        this.onExit?.(index, code, signal);
      }
    });
    this.procs.set(index, child);
  }

  running(index: number): boolean {
    return this.procs.has(index);
  }

  stopping(index: number): boolean {
    return this.stoppingNodes.has(index);
  }

  /** The asd process id (ip netns exec execs it, so the child's pid is the server's). */
  pid(index: number): number | undefined {
    return this.procs.get(index)?.pid;
  }

  kill(index: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.procs.get(index);
    if (!child) return Promise.resolve();
    this.stoppingNodes.add(index);
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }

  pause(index: number): void {
    this.procs.get(index)?.kill('SIGSTOP');
  }

  resume(index: number): void {
    this.procs.get(index)?.kill('SIGCONT');
  }

  /** Cuts every link between group `a` and group `b` (node indexes); the clients still reach both. */
  partition(a: number[], b: number[]): void {
    for (const i of a) {
      for (const j of b) {
        this.cut(this.node(i).netns, this.node(j).address);
        this.cut(this.node(j).netns, this.node(i).address);
      }
    }
  }

  /**
   * An availability zone isolated: node `node` and the clients of zone 1 cut off from the other nodes and from the
   * clients of zone 2 (the nodes still reach each other's side as partition() does); the harness (root namespace)
   * still reaches every node, as each node's own watchdog does.
   */
  isolateZone(node: number): void {
    const others = this.nodes.filter((n) => n.index !== node).map((n) => n.index);
    this.partition([node], others);
    const az1 = this.clientNetns(1);
    const az2 = this.clientNetns(2);
    for (const i of others) {
      this.cut(az1.netns, this.node(i).address);
      this.cut(this.node(i).netns, az1.address);
    }
    this.cut(az2.netns, this.node(node).address);
    this.cut(this.node(node).netns, az2.address);
  }

  /**
   * The fabric port (3001) cut between group `a` and group `b`, heartbeats (3002) and the service (3000) intact: nft
   * drop rules in each side's namespace (nftables must be installed). Removed by heal().
   */
  cutFabric(a: number[], b: number[]): void {
    const rule = (netns: string, peer: string) => {
      sh(inNs(netns, ['nft', 'add', 'rule', 'inet', 'cut', 'in', 'ip', 'saddr', peer, 'tcp', 'dport', '3001', 'drop']));
      sh(inNs(netns, ['nft', 'add', 'rule', 'inet', 'cut', 'in', 'ip', 'saddr', peer, 'tcp', 'sport', '3001', 'drop']));
    };
    const sides = [...a, ...b];
    for (const i of sides) {
      const netns = this.node(i).netns;
      sh(inNs(netns, ['nft', 'add', 'table', 'inet', 'cut']));
      sh(inNs(netns, ['nft', 'add', 'chain', 'inet', 'cut', 'in', '{ type filter hook input priority 0 ; }']));
      this.fabricCuts.push(netns);
    }
    for (const i of a) for (const j of b) rule(this.node(i).netns, this.node(j).address);
    for (const j of b) for (const i of a) rule(this.node(j).netns, this.node(i).address);
  }

  /** Whether node `from`'s namespace reaches `address` (no blackhole route of a partition between them). */
  reaches(from: number, address: string): boolean {
    const netns = this.node(from).netns;
    return !this.cuts.some((c) => c.netns === netns && c.peer === address);
  }

  private cut(netns: string, peer: string): void {
    sh(inNs(netns, ['ip', 'route', 'add', 'blackhole', `${peer}/32`]));
    this.cuts.push({ netns, peer });
  }

  heal(): void {
    for (const netns of this.fabricCuts.splice(0))
      sh(inNs(netns, ['nft', 'delete', 'table', 'inet', 'cut']), { ignoreError: true });
    for (const c of this.cuts.splice(0)) {
      sh(inNs(c.netns, ['ip', 'route', 'del', 'blackhole', `${c.peer}/32`]), { ignoreError: true });
    }
  }

  async stopAll(): Promise<void> {
    for (const i of [...this.procs.keys()]) {
      this.resume(i);
      await this.kill(i, 'SIGTERM');
    }
  }

  async info(index: number, command: string, timeoutMs = 2000): Promise<string> {
    return infoCommand(this.node(index).address, SERVICE_PORT, command, timeoutMs);
  }

  /**
   * Waits until every running node answers `cluster-stable` with the same cluster key for the expected size, with
   * no migration pending (the rolling-restart check of cdk/aerospike-scripts.ts).
   */
  async waitStable(size: number, timeoutMs = 180_000): Promise<number> {
    const started = Date.now();
    let last = '';
    while (Date.now() - started < timeoutMs) {
      const keys = await Promise.all(
        [...this.procs.keys()].map((i) =>
          this.info(i, `cluster-stable:size=${size};ignore-migrations=false`).catch((e: Error) => `ERROR ${e.message}`),
        ),
      );
      last = keys.join(' ');
      if (keys.length === size && keys.every((k) => k && !k.startsWith('ERROR') && k === keys[0])) {
        return Date.now() - started;
      }
      await sleep(500);
    }
    throw new Error(`cluster not stable (size ${size}) after ${timeoutMs} ms: ${last}`);
  }

  /** Namespace statistics of one node, as a map. */
  async namespaceStats(index: number, namespace: string): Promise<Record<string, string>> {
    const text = await this.info(index, `namespace/${namespace}`);
    return Object.fromEntries(
      text
        .split(';')
        .map((kv) => kv.split('='))
        .filter((kv) => kv.length === 2),
    );
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A new namespace on the bridge: a veth pair (`hostSide` on the bridge, `innerSide` inside) and its address. */
function attachNamespace(bridge: string, netns: string, hostSide: string, innerSide: string, address: string): void {
  sh(['ip', 'netns', 'add', netns]);
  sh(['ip', 'link', 'add', hostSide, 'type', 'veth', 'peer', 'name', innerSide]);
  sh(['ip', 'link', 'set', innerSide, 'netns', netns]);
  sh(['ip', 'link', 'set', hostSide, 'master', bridge]);
  sh(['ip', 'link', 'set', hostSide, 'up']);
  sh(inNs(netns, ['ip', 'addr', 'add', `${address}/24`, 'dev', innerSide]));
  sh(inNs(netns, ['ip', 'link', 'set', innerSide, 'up']));
  sh(inNs(netns, ['ip', 'link', 'set', 'lo', 'up']));
}

/**
 * One Aerospike info command over its wire protocol (8-byte header: version 2, type 1 (info), 48-bit length; body
 * "<command>\n"; answer "<command>\t<value>\n"). Independent of the client's cluster tending, so it answers while
 * the cluster is split.
 */
export function infoCommand(host: string, port: number, command: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    const body = Buffer.from(`${command}\n`);
    const header = Buffer.alloc(8);
    header.writeUInt8(2, 0);
    header.writeUInt8(1, 1);
    header.writeUIntBE(body.length, 2, 6);
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`info ${command} on ${host}: timeout`));
    }, timeoutMs);
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 8) return;
      const length = received.readUIntBE(2, 6);
      if (received.length < 8 + length) return;
      clearTimeout(timer);
      socket.destroy();
      const text = received.subarray(8, 8 + length).toString();
      const tab = text.indexOf('\t');
      resolve((tab >= 0 ? text.slice(tab + 1) : text).trim());
    });
    socket.connect(port, host, () => socket.write(Buffer.concat([header, body])));
  });
}
