/**
 * What systemd does for one node of the cluster stack, run locally (scripts/e2e/local-cluster.ts): `aerospike.service`
 * with the bootstrap's drop-ins (ExecStartPre `aerospike-devices check` and `aerospike-watchdog check-start`, restart
 * after a failure after RestartSec, both read from the bootstrap script of the template) and `aerospike-watchdog.service`
 * (the template's watchdog script, `run`). The scripts are the template's own; `systemctl show` and `asinfo` are
 * stand-ins (a state file this supervisor writes; the info protocol over bash's /dev/tcp to the node's port), the
 * devices-list path is the one substitution, as for apply-config.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, openSync, renameSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { DEVICES_FILE } from '../../cdk/aerospike-scripts';
import {
  clusterParameters,
  LocalClusterError,
  prepareNode,
  runScript,
  tail,
  waitForPort,
  type LocalClusterOptions,
  type NodeSetup,
  type RunningCluster,
} from './local-cluster';

export interface SupervisorEvent {
  at: number;
  what: string;
}

/** Restart=on-failure and RestartSec of aerospike.service as the bootstrap's drop-in sets them (undefined: none). */
export function restartPolicy(bootstrap: string): { restartMs?: number } {
  const dropIn = /aerospike\.service\.d\/watchdog\.conf <<'UNIT'\n([\s\S]*?)\nUNIT/.exec(bootstrap)?.[1] ?? '';
  if (!/^Restart=on-failure$/m.test(dropIn)) return {};
  return { restartMs: Number(/^RestartSec=(\d+)$/m.exec(dropIn)?.[1] ?? 0) * 1000 };
}

/**
 * bash stand-in of `asinfo [-h host] [-p port] -v <command>` (default: this node; check-start asks the others) over
 * the info protocol (v2 type 1, 48-bit big-endian length).
 */
function asinfoStandIn(port: number): string {
  return `#!/bin/bash
host=127.0.0.1; port=${port}; cmd=''
while [ $# -gt 0 ]; do
  case "$1" in -h) host=$2; shift 2 ;; -p) port=$2; shift 2 ;; -v) cmd=$2; shift 2 ;; *) echo "asinfo stand-in: only -h -p -v" >&2; exit 2 ;; esac
done
[ -n "$cmd" ] || { echo "asinfo stand-in: -v <command> needed" >&2; exit 2; }
cmd="$cmd"$'\\n'; len=\${#cmd}
exec 3<>/dev/tcp/$host/$port || exit 1
printf "$(printf '\\\\x02\\\\x01\\\\x00\\\\x00\\\\x00\\\\x00\\\\x%02x\\\\x%02x' $((len >> 8 & 255)) $((len & 255)))%s" "$cmd" >&3
dd bs=1 count=8 <&3 >/dev/null 2>&1
IFS= read -r line <&3 || exit 1
tab=$'\\t'; echo "\${line#*$tab}"
`;
}

/** bash stand-in of `systemctl show -p MainPID|ActiveState --value aerospike`: the supervisor's state file. */
function systemctlStandIn(stateFile: string): string {
  return `#!/bin/bash
[ "$1 $2 $4 $5" = "show -p --value aerospike" ] || { echo "systemctl stand-in: only show -p X --value aerospike" >&2; exit 2; }
read -r state pid < "${stateFile}" 2>/dev/null || { state=inactive; pid=0; }
case "$3" in MainPID) echo "$pid" ;; ActiveState) echo "$state" ;; *) exit 2 ;; esac
`;
}

export class NodeSupervisor {
  readonly events: SupervisorEvent[] = [];
  readonly mark: string;
  pid?: number;
  private asd?: ChildProcess;
  private watchdog?: ChildProcess;
  private stopping = false;
  private closed = false;
  private readonly bin: string;
  private readonly stateFile: string;
  private readonly devicesFile: string;

  constructor(
    private readonly o: {
      asd: string;
      node: NodeSetup;
      params: Map<string, string>;
      log?: (line: string) => void;
    },
  ) {
    const dir = o.node.dir;
    this.bin = path.join(dir, 'sbin');
    this.stateFile = path.join(dir, 'aerospike.state');
    this.devicesFile = path.join(dir, 'devices.list');
    this.mark = path.join(dir, 'watchdog', 'wipe-on-start');
    mkdirSync(this.bin, { recursive: true });
    for (const [name, text] of [
      ['asinfo', asinfoStandIn(o.node.servicePort)],
      ['systemctl', systemctlStandIn(this.stateFile)],
    ]) {
      writeFileSync(path.join(this.bin, name), text);
      chmodSync(path.join(this.bin, name), 0o755);
    }
    this.setState('inactive', 0);
  }

  private note(what: string): void {
    this.events.push({ at: Date.now(), what });
    this.o.log?.(`    [node${this.o.node.index}] ${what}`);
  }

  private setState(state: string, pid: number): void {
    writeFileSync(`${this.stateFile}.tmp`, `${state} ${pid}\n`);
    renameSync(`${this.stateFile}.tmp`, this.stateFile);
  }

  private script(name: string): string {
    const text = this.o.params.get(name);
    if (!text) throw new LocalClusterError(`the cluster stack has no SSM parameter …/${name}`);
    return text.split(DEVICES_FILE).join(this.devicesFile);
  }

  private env(): Record<string, string> {
    // check-start finds the other nodes in the node's conf (its mesh seeds: the local ports)
    return {
      MARK: this.mark,
      ASINFO: path.join(this.bin, 'asinfo'),
      CONF: this.o.node.confFile,
      PATH: `${this.bin}:/usr/bin:/bin:/usr/sbin`,
    };
  }

  /** bytes of the node's data file (the stand-in device) */
  dataBytes(): number {
    return statSync(path.join(this.o.node.dir, 'data.dat')).size;
  }

  /**
   * `aerospike-watchdog check-start`, not blocking the event loop: with a silent mark it may wait up to 10 s for the
   * other nodes, which systemd starts meanwhile (and this process supervises)
   */
  private checkStart(): Promise<string> {
    const file = path.join(this.o.node.dir, 'script-check-start.sh');
    writeFileSync(file, this.script('aerospike-watchdog'));
    return new Promise((resolve, reject) => {
      const child = spawn('bash', [file, 'check-start'], { env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0 ? resolve(out) : reject(new LocalClusterError(`check-start failed (${code}): ${out}`)),
      );
    });
  }

  /** the next restart after a failure waits this long instead of RestartSec, once (an instance slow to come back) */
  slowRestartMs?: number;

  /** `systemctl start aerospike`: the ExecStartPre checks, then asd in the foreground; answers its pid */
  async start(): Promise<number> {
    this.stopping = false;
    this.setState('activating', 0);
    const { dir } = this.o.node;
    runScript(dir, this.script('aerospike-devices'), ['check'], this.o.params, {
      BYID: path.join(dir, 'by-id'),
      DEVICES_FILE: this.devicesFile,
    });
    const out = await this.checkStart();
    // which way check-start went: starting empty (wiped) or, a silent mark without a majority, with its data
    const said = out.split('\n').find((l) => /starting (empty|with its data)/.test(l));
    if (said) this.note(`check-start: ${said.trim()} (data file now ${this.dataBytes()} B)`);
    if (this.closed) throw new LocalClusterError('closed while check-start ran');
    const log = openSync(path.join(dir, 'asd.out'), 'a');
    const child = spawn(this.o.asd, ['--config-file', this.o.node.confFile, '--foreground'], {
      detached: true,
      stdio: ['ignore', log, log],
    });
    child.unref();
    this.asd = child;
    this.pid = child.pid!;
    writeFileSync(path.join(dir, 'e2e.pid'), String(child.pid));
    this.setState('active', child.pid!);
    this.note(`asd started (pid ${child.pid})`);
    child.once('exit', (code, signal) => this.exited(child, code, signal));
    return child.pid!;
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== this.asd) return;
    this.asd = undefined;
    this.pid = undefined;
    const failed = !this.stopping && (signal !== null || code !== 0);
    this.setState(failed ? 'failed' : 'inactive', 0);
    this.note(`asd exited (${signal ?? `code ${code}`})${failed ? ': failed' : ''}`);
    const { restartMs } = restartPolicy(this.o.params.get('bootstrap') ?? '');
    const delayMs = this.slowRestartMs ?? restartMs;
    this.slowRestartMs = undefined;
    if (failed && restartMs !== undefined && !this.closed)
      setTimeout(() => {
        if (this.closed || this.asd) return;
        this.start().catch((err: unknown) => this.note(`restart failed: ${(err as Error).message}`));
      }, delayMs);
  }

  /** `systemctl start aerospike-watchdog`: the template's script, `run`, its stderr lines noted */
  startWatchdog(): void {
    const file = path.join(this.o.node.dir, 'aerospike-watchdog');
    writeFileSync(file, this.script('aerospike-watchdog'));
    const child = spawn('bash', [file, 'run'], {
      env: this.env(),
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    child.unref();
    writeFileSync(path.join(this.o.node.dir, 'watchdog.pid'), String(child.pid));
    let buffered = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) this.note(`watchdog: ${l.trim()}`);
    });
    this.watchdog = child;
  }

  /** `systemctl stop aerospike` (deactivating while it stops: the watchdog drops its observations) */
  async stop(): Promise<void> {
    const child = this.asd;
    if (!child?.pid) return;
    this.stopping = true;
    this.setState('deactivating', child.pid);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }

  /** `asinfo -v <command>` through the stand-in ('' when the node does not answer within 1 s) */
  info(command: string): string {
    const r = spawnSync('timeout', ['1', path.join(this.bin, 'asinfo'), '-v', command], { encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : '';
  }

  /** a member of a settled cluster of `size` nodes (migrations done too unless `ignoreMigrations`) */
  settled(size: number, ignoreMigrations = true): boolean {
    return /^[0-9A-F]+$/.test(this.info(`cluster-stable:size=${size};ignore-migrations=${ignoreMigrations}`));
  }

  markSet(): boolean {
    return existsSync(this.mark);
  }

  /** the watchdog, then asd; no restart afterwards */
  async close(): Promise<void> {
    this.closed = true;
    if (this.watchdog?.pid) {
      try {
        process.kill(-this.watchdog.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    if (this.pid) {
      try {
        process.kill(this.pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
    await this.stop();
  }
}

export interface SupervisedCluster extends RunningCluster {
  supervisors: NodeSupervisor[];
}

/**
 * The cluster stack's nodes as systemd runs them: each node prepared as startLocalCluster does, `aerospike.service`
 * started through its ExecStartPre checks, then, once every node listens, `aerospike-watchdog.service`.
 */
export async function startSupervisedCluster(
  o: LocalClusterOptions & { log?: (line: string) => void },
): Promise<SupervisedCluster> {
  if (!existsSync(o.asd)) throw new LocalClusterError(`no Aerospike server binary at ${o.asd}`);
  const params = clusterParameters(o.stack);
  const supervisors: NodeSupervisor[] = [];
  const nodes: RunningCluster['nodes'] = [];
  const close = async () => {
    await Promise.all(supervisors.map((s) => s.close()));
  };
  try {
    for (let i = 0; i < o.nodes; i++) {
      const setup = prepareNode(o, i);
      const sup = new NodeSupervisor({ asd: o.asd, node: setup, params, log: o.log });
      supervisors.push(sup);
      nodes.push({ ...setup, pid: await sup.start() });
    }
    for (const n of nodes) await waitForPort(n.servicePort, 60_000);
    // the cluster formed (every node a member of one cluster of all of them), as the bootstrap's first start ends
    const until = Date.now() + 60_000;
    while (!supervisors.every((sup) => sup.settled(o.nodes))) {
      if (Date.now() > until) throw new LocalClusterError(`the ${o.nodes} nodes did not form a cluster within 60 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (err) {
    const logs = nodes.map((n) => `${n.dir}/aerospike.log:\n${tail(path.join(n.dir, 'aerospike.log'))}`);
    await close();
    throw new LocalClusterError(`${(err as Error).message}\n${logs.join('\n')}`);
  }
  for (const sup of supervisors) sup.startWatchdog();
  return { hosts: nodes.map((n) => `127.0.0.1:${n.servicePort}`).join(','), nodes, supervisors, stop: close };
}
