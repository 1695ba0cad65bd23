/**
 * Stubs for running the node watchdog script (cdk/node-watchdog.ts) with bash: a directory per test with stub
 * binaries (asinfo answering for the other nodes from files named host:port, blkdiscard, hostname), the node's conf,
 * its devices list and its mark. `setUp` and `tearDown` run around each test; the paths are live bindings.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AEROSPIKE_HEARTBEAT_PORT, AEROSPIKE_SERVICE_PORT, renderAerospikeConf } from '../../cdk/aerospike-scripts';
import { renderWatchdogScript } from '../../cdk/node-watchdog';

export let dir: string;
export let bin: string;
export let answers: string;
export let calls: string;
export let mark: string;
export let conf: string;
export let devices: string;

export const hosts = (n: number) => Array.from({ length: n }, (_, i) => `aerospike-${i + 1}.utxo.internal`);

export function writeConf(nodes: number, minClusterSize: number): void {
  writeFileSync(
    conf,
    renderAerospikeConf({
      clusterName: 'utxo',
      seeds: hosts(nodes),
      namespace: 'utxo',
      replicationFactor: 2,
      minClusterSize,
      protoFdMax: 15000,
      nsupPeriodSeconds: 120,
      maxRecordSize: 1048576,
    }),
  );
}

export function stub(name: string, body: string): void {
  writeFileSync(path.join(bin, name), `#!/bin/bash\necho "${name} $*" >> "${calls}"\n${body}\n`);
  chmodSync(path.join(bin, name), 0o755);
}

/** node i (1-based) answers `key` to cluster-stable at its service port (from its `after`-th question on) */
export function answer(i: number, key: string, after = 1): void {
  const file = path.join(answers, `aerospike-${i}.utxo.internal:${AEROSPIKE_SERVICE_PORT}`);
  writeFileSync(file, key);
  writeFileSync(`${file}.after`, `${after}`);
}

export const script = () =>
  renderWatchdogScript(devices, {
    file: '/etc/aerospike/aerospike.conf',
    serviceBelowHeartbeat: AEROSPIKE_HEARTBEAT_PORT - AEROSPIKE_SERVICE_PORT,
  });

export const env = (extra: Record<string, string> = {}) => ({
  PATH: `${bin}:/usr/bin:/bin`,
  MARK: mark,
  CONF: conf,
  PEER_WAIT_MS: '1500',
  ...extra,
});

/** a stub TCP probe: the nodes `down` refuse the connection, the nodes `up` accept it, the others do not answer */
export function probe(down: number[], up: number[] = []): string {
  const file = path.join(bin, 'probe');
  const names = (nodes: number[]) => nodes.map((i) => `aerospike-${i}.*`).join('|') || 'none';
  writeFileSync(file, `#!/bin/bash\ncase "$1" in ${names(down)}) exit 1 ;; ${names(up)}) exit 0 ;; esac\nexit 124\n`);
  chmodSync(file, 0o755);
  return file;
}

export function setMark(kind: string): void {
  mkdirSync(path.dirname(mark), { recursive: true });
  writeFileSync(mark, kind ? `${kind}\n` : '');
}

export function setUp(): void {
  dir = mkdtempSync(path.join(tmpdir(), 'watchdog-check-start-'));
  bin = path.join(dir, 'bin');
  answers = path.join(dir, 'answers');
  calls = path.join(dir, 'calls.log');
  mark = path.join(dir, 'lib', 'wipe-on-start');
  conf = path.join(dir, 'aerospike.conf');
  devices = path.join(dir, 'devices.list');
  mkdirSync(bin);
  mkdirSync(answers);
  writeFileSync(devices, '/dev/disk/by-id/nvme-A\n/dev/disk/by-id/nvme-B\n');
  writeConf(3, 2);
  // this node is aerospike-1 (the bootstrap sets the host name to the node's DNS name)
  stub('hostname', `echo ${hosts(3)[0]}`);
  stub('blkdiscard', 'exit 0');
  // asinfo -h <host> -p <port> -v <command>: the answer file's key from its `after`-th question on, else no answer
  stub(
    'asinfo',
    `while [ $# -gt 0 ]; do case "$1" in -h) h=$2; shift 2 ;; -p) p=$2; shift 2 ;; -v) v=$2; shift 2 ;; *) exit 2 ;; esac; done
f="${answers}/$h:$p"; [ -f "$f" ] || exit 1
n=$(grep -c -- "-h $h -p $p " "${calls}")
[ "$n" -ge "$(cat "$f.after")" ] || exit 1
[ "$v" = 'cluster-stable:ignore-migrations=true' ] || exit 3
cat "$f"; echo`,
  );
}

/**
 * the script runs each asinfo under `timeout`, which puts it in a process group of its own: killing the watchdog's
 * group leaves those running (writing to the call log, waiting for `resumed`) for up to their timeout. They are
 * found by the stub's path on their command line and killed before the directory goes.
 */
function killLeftovers(): void {
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (Number(pid) !== process.pid && cmdline.includes(dir)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
}

export function tearDown(): void {
  killLeftovers();
  // a killed process's last write may still land: retried on ENOTEMPTY
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}
