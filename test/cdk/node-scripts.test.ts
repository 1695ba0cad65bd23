/**
 * The node scripts, run with bash against stub commands (aws, asinfo, asbackup, asrestore, systemctl record their
 * arguments; `aws s3 cp` reads and writes a local directory standing for the bucket): the device check, the config
 * apply, the backup (principal only, marker last) and the restore procedure (refuses an incomplete backup).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  DEVICES_PLACEHOLDER,
  renderAerospikeConf,
  renderApplyConfigScript,
  renderUserData,
  renderDeviceScript,
  shq,
} from '../../cdk/aerospike-scripts';
import { BACKUP_COMPLETE_MARKER, renderBackupScript, renderRestoreScript } from '../../cdk/backup-scripts';
import { PIN_METADATA_KEY, pinOf, type Pins } from '../../cdk/node-pins';

let dir: string;
let bin: string;
let s3: string;
let calls: string;

/** A stub command: logs `name args...` to calls.log, then runs `body`. */
function stub(name: string, body = ''): void {
  const file = path.join(bin, name);
  writeFileSync(file, `#!/bin/bash\necho "${name} $*" >> "${calls}"\n${body}\n`);
  chmodSync(file, 0o755);
}

function run(script: string, args: string[] = [], env: Record<string, string> = {}) {
  const file = path.join(dir, `script-${Math.random().toString(36).slice(2)}.sh`);
  writeFileSync(file, script);
  return spawnSync('bash', [file, ...args], {
    encoding: 'utf8',
    env: { PATH: `${bin}:/usr/bin:/bin`, REGION: 'eu-west-1', ...env },
  });
}

const callLog = (): string[] => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []);

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'node-scripts-'));
  bin = path.join(dir, 'bin');
  s3 = path.join(dir, 's3');
  calls = path.join(dir, 'calls.log');
  mkdirSync(bin);
  mkdirSync(s3);
  // aws s3 cp <src> <dst>: "-" is stdin/stdout, s3://bucket/key is $S3/bucket/key; aws ssm get-parameter: $PARAMS/<name>
  stub(
    'aws',
    `S3="${s3}"
if [ "$1" = s3 ] && [ "$2" = cp ]; then
  shift 2; while [ "\${1#--}" != "$1" ]; do shift 2; done
  src=$1; dst=$2
  if [ "$src" = - ]; then mkdir -p "$(dirname "$S3/\${dst#s3://}")"; cat > "$S3/\${dst#s3://}"; exit 0; fi
  f="$S3/\${src#s3://}"; [ -f "$f" ] || { echo "NoSuchKey: $src" >&2; exit 1; }
  cat "$f"; exit 0
fi
if [ "$1" = ssm ] && [ "$2" = get-parameter ]; then
  # the CLI's text output: the value and a newline
  while [ "$1" != --name ]; do shift; done; cat "${dir}/params/$(basename "$2")"; echo; exit 0
fi
if [ "$1" = cloudwatch ] && [ "$2" = put-metric-data ]; then exit 0; fi
# aws s3 ls [--recursive] s3://bucket/prefix/: PRE lines, or every key under the prefix
if [ "$1" = s3 ] && [ "$2" = ls ]; then
  shift 2; rec=; url=
  while [ $# -gt 0 ]; do case "$1" in --recursive) rec=1; shift ;; --region) shift 2 ;; *) url=$1; shift ;; esac; done
  b=\${url#s3://}; b=\${b%%/*}; p=\${url#s3://$b/}
  if [ -n "$rec" ]; then (cd "$S3/$b" && find "$p" -type f | sort | sed 's/^/2026-01-01 00:00:00 1 /'); exit 0; fi
  for d in "$S3/$b/$p"*/; do [ -d "$d" ] && echo "                           PRE $(basename "$d")/"; done; exit 0
fi
# aws s3api list-objects-v2 --bucket b --prefix p ... (keys, tab-separated); put-object-tagging appends to $S3/tags
if [ "$1" = s3api ]; then
  op=$2; shift 2; b=; p=; k=; q=
  while [ $# -gt 0 ]; do case "$1" in --bucket) b=$2; shift 2 ;; --prefix) p=$2; shift 2 ;; --key) k=$2; shift 2 ;; --query) q=$2; shift 2 ;; *) shift ;; esac; done
  # --query 'Contents[].[Key,Size]': one "key<TAB>size" line per object
  if [ "$op" = list-objects-v2 ] && [ "$q" = 'Contents[].[Key,Size]' ]; then
    lines=$(cd "$S3/$b" && find "$p" -type f -printf '%p\t%s\n' 2>/dev/null | sort); echo "\${lines:-None}"; exit 0
  fi
  if [ "$op" = list-objects-v2 ]; then keys=$(cd "$S3/$b" && find "$p" -type f 2>/dev/null | sort | tr '\n' '\t'); echo "\${keys:-None}"; exit 0; fi
  if [ "$op" = put-object-tagging ]; then echo "$k" >> "$S3/tags"; exit 0; fi
fi
if [ "$1" = cloudformation ] && [ "$2" = describe-stack-resource ]; then
  while [ "$1" != --logical-resource-id ]; do shift; done; cat "${dir}/meta/$2"; exit 0
fi
exit 3`,
  );
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The pins of the stub stack: setting s has the logical id `Param_<s>` (cdk/node-pins.ts). */
const PINS: Pins = {
  stackName: 'Stub-Cluster',
  logicalIds: Object.fromEntries(
    (
      [
        'bootstrap',
        'aerospike-devices',
        'aerospike-apply-config',
        'aerospike-watchdog',
        'conf',
        'cloudwatch-agent',
        'package',
        'exporter-package',
      ] as const
    ).map((k) => [k, `Param_${k}`]),
  ) as Pins['logicalIds'],
};

/** Pins `value` for `setting` in the stub stack's metadata (as `aws ssm get-parameter --output text` writes it). */
function pin(setting: keyof Pins['logicalIds'], value: string): void {
  mkdirSync(path.join(dir, 'meta'), { recursive: true });
  writeFileSync(
    path.join(dir, 'meta', `Param_${setting}`),
    JSON.stringify({ [PIN_METADATA_KEY]: pinOf(value) }) + '\n',
  );
}

describe('aerospike-devices', () => {
  function byId(names: string[]): string {
    const d = path.join(dir, `by-id-${Math.random().toString(36).slice(2)}`);
    mkdirSync(d);
    for (const n of names) symlinkSync('/dev/null', path.join(d, n));
    return d;
  }
  const DISK = 'nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1111';
  const DISK2 = 'nvme-Amazon_EC2_NVMe_Instance_Storage_AWS2222';

  test('record keeps one stable by-id path per instance-store disk; check passes on the same list', () => {
    const ids = byId([DISK, `${DISK}_1`, `${DISK}-part1`, DISK2, 'nvme-Amazon_Elastic_Block_Store_vol0abc']);
    const list = path.join(dir, 'devices.list');
    const env = { BYID: ids, DEVICES_FILE: list };
    expect(run(renderDeviceScript(), ['record'], env).status).toBe(0);
    expect(readFileSync(list, 'utf8')).toBe(`${ids}/${DISK}\n${ids}/${DISK2}\n`);
    expect(run(renderDeviceScript(), ['check'], env).status).toBe(0);
  });

  test('check refuses to start when a device vanished or was replaced (new serial), or nothing was recorded', () => {
    const list = path.join(dir, 'devices.list');
    const ids = byId([DISK, DISK2]);
    const env = { BYID: ids, DEVICES_FILE: list };
    expect(run(renderDeviceScript(), ['record'], env).status).toBe(0);
    expect(run(renderDeviceScript(), ['check'], env).status).toBe(0);
    // a device vanished
    rmSync(path.join(ids, DISK2));
    let r = run(renderDeviceScript(), ['check'], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/devices changed since first boot.*refusing to start/s);
    // replaced: same count, another serial (a stop/start or host change)
    symlinkSync('/dev/null', path.join(ids, 'nvme-Amazon_EC2_NVMe_Instance_Storage_AWS9999'));
    r = run(renderDeviceScript(), ['check'], env);
    expect(r.status).toBe(1);
    // back to the recorded list: starts again
    rmSync(path.join(ids, 'nvme-Amazon_EC2_NVMe_Instance_Storage_AWS9999'));
    symlinkSync('/dev/null', path.join(ids, DISK2));
    expect(run(renderDeviceScript(), ['check'], env).status).toBe(0);
    const before = ids;
    const none = run(renderDeviceScript(), ['check'], { BYID: before, DEVICES_FILE: path.join(dir, 'missing') });
    expect(none.status).toBe(1);
    expect(run(renderDeviceScript(), ['record'], { BYID: byId([]), DEVICES_FILE: list }).status).toBe(1);
  });
});

describe('aerospike-apply-config', () => {
  test('writes the conf from SSM with one device line per recorded device; restart waits for a stable cluster', () => {
    const conf = renderAerospikeConf({
      clusterName: 'c',
      seeds: ['a.zone', 'b.zone', 'c.zone'],
      namespace: 'utxo',
      replicationFactor: 2,
      minClusterSize: 2,
      protoFdMax: 15000,
      nsupPeriodSeconds: 120,
      maxRecordSize: 3145728,
    });
    mkdirSync(path.join(dir, 'params'));
    writeFileSync(path.join(dir, 'params', 'conf'), conf);
    const devices = path.join(dir, 'devices.list');
    writeFileSync(
      devices,
      '/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_A\n/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_B\n',
    );
    pin('conf', conf);
    const script = renderApplyConfigScript('/p', 3, PINS).split('/etc/aerospike/devices.list').join(devices);
    stub('systemctl');
    // unstable twice, then the cluster key
    stub(
      'asinfo',
      `n=$(grep -c '^asinfo' "${calls}"); if [ "$n" -lt 3 ]; then echo ERROR::unstable-cluster; else echo ABC123; fi`,
    );
    stub('sleep');
    const r = run(script, ['restart'], { CONF_DIR: dir });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const written = readFileSync(path.join(dir, 'aerospike.conf'), 'utf8');
    expect(written).toContain(
      '        device /dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_A\n        device /dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_B\n',
    );
    expect(written).not.toContain(DEVICES_PLACEHOLDER.trim());
    expect(written).toContain('min-cluster-size 2');
    expect(callLog()).toEqual(
      expect.arrayContaining([
        'systemctl restart aerospike',
        'asinfo -v cluster-stable:size=3;ignore-migrations=false',
      ]),
    );
    expect(r.stdout).toContain('cluster stable (ABC123)');
  });
});

describe('pinned node settings (cdk/node-pins.ts)', () => {
  const conf = renderAerospikeConf({
    clusterName: 'c',
    seeds: ['a'],
    namespace: 'utxo',
    replicationFactor: 1,
    minClusterSize: 1,
    protoFdMax: 15000,
    nsupPeriodSeconds: 120,
    maxRecordSize: 3145728,
  });

  test('apply-config refuses a conf whose SHA-256 is not the one pinned in the stack (a parameter write alone)', () => {
    mkdirSync(path.join(dir, 'params'));
    pin('conf', conf);
    writeFileSync(path.join(dir, 'params', 'conf'), conf.replace('nsup-period 120', 'nsup-period 1'));
    const r = run(renderApplyConfigScript('/p', 1, PINS), [], { CONF_DIR: dir });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('/p/conf does not match the SHA-256 pinned in stack Stub-Cluster: refused');
    expect(existsSync(path.join(dir, 'aerospike.conf'))).toBe(false);
    expect(callLog()).toContain(
      'aws cloudformation describe-stack-resource --region eu-west-1 --stack-name Stub-Cluster --logical-resource-id Param_conf --query StackResourceDetail.Metadata --output text',
    );
  });

  test('the user data runs the bootstrap only if it is the pinned one', () => {
    mkdirSync(path.join(dir, 'params'));
    const sbin = path.join(dir, 'sbin');
    mkdirSync(sbin);
    const bootstrap = '#!/bin/bash\necho "bootstrap ran $*"\n';
    const userData = (): string =>
      renderUserData('/p', 1, 'aerospike-1.z', PINS).join('\n').split('/usr/local/sbin').join(sbin);
    pin('bootstrap', bootstrap);
    writeFileSync(path.join(dir, 'params', 'bootstrap'), bootstrap);
    const ok = run(userData());
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toContain('bootstrap ran /p 1 aerospike-1.z');
    writeFileSync(path.join(dir, 'params', 'bootstrap'), '#!/bin/bash\necho "attacker ran"\n');
    const tampered = run(userData());
    expect(tampered.status).toBe(1);
    expect(tampered.stdout).not.toContain('attacker ran');
    expect(tampered.stderr).toContain('/p/bootstrap does not match the SHA-256 pinned in stack Stub-Cluster');
    expect(existsSync(path.join(sbin, 'aerospike-bootstrap'))).toBe(false);
  });
});

describe('backup and restore', () => {
  const o = {
    bucket: 'backups',
    prefix: 'aerospike',
    namespace: 'utxo',
    metric: { namespace: 'BsvUtxoStore/Aerospike', clusterName: 'c1' },
    keepNewest: 2,
  };
  const METRIC_PUT =
    'aws cloudwatch put-metric-data --region eu-west-1 --namespace BsvUtxoStore/Aerospike --metric-name BackupCompleted --dimensions cluster_name=c1 --value 1';
  const principal = (node: string) =>
    stub(
      'asinfo',
      `case "$2" in node) echo ${node} ;; statistics) echo 'cluster_size=3;cluster_principal=BB9;x=1' ;; esac`,
    );
  const dirOf = (stamp: string) => path.join(s3, 'backups/aerospike', stamp);
  const FILES = { 'utxo_00000.asb': 'first file\n', 'utxo_00001.asb': 'second, longer file\n' };
  /**
   * asbackup as it runs: writes `files` into the backup directory of `stamp` (the bucket is a local directory) and,
   * unless `summary` is false, its --machine file's SUMMARY line (records:indexes:udfs:bytes:bytes per record).
   */
  const asbackupWriting = (stamp: string, files: Record<string, string> = FILES, summary = true) =>
    stub(
      'asbackup',
      [
        'm=; while [ $# -gt 0 ]; do case "$1" in --machine) m=$2; shift 2 ;; *) shift ;; esac; done',
        `d="${dirOf(stamp)}"; mkdir -p "$d"`,
        ...Object.entries(files).map(([name, content]) => `printf '%s' ${shq(content)} > "$d/${name}"`),
        'echo "PROGRESS:0:0:0" >> "$m"',
        summary ? 'echo "SUMMARY:42:3:1:1234:29" >> "$m"' : '',
      ].join('\n'),
    );
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  const marker = (stamp: string) => readFileSync(path.join(dirOf(stamp), BACKUP_COMPLETE_MARKER), 'utf8');

  test('the principal backs up to s3://<bucket>/aerospike/<time>/ and writes the manifest last, as the marker', () => {
    principal('BB9');
    asbackupWriting('T1');
    const r = run(renderBackupScript(o), [], { STAMP: 'T1' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(callLog()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^asbackup --namespace utxo --directory s3:\/\/backups\/aerospike\/T1 --s3-region eu-west-1 --compress zstd --machine \/\S+\/machine$/,
        ),
      ]),
    );
    // the record count asbackup reported, every file with its size and SHA-256 as read back from the bucket
    expect(marker('T1')).toMatch(
      new RegExp(
        [
          '^namespace=utxo',
          'node=BB9',
          'records=42',
          `file=${sha256(FILES['utxo_00000.asb'])} 11 utxo_00000.asb`,
          `file=${sha256(FILES['utxo_00001.asb'])} 20 utxo_00001.asb`,
          'finished=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\n$',
        ].join('\n'),
      ),
    );
    // after the marker: the metric the backup-age alarm watches
    expect(callLog()).toContain(METRIC_PUT);
    expect(r.stdout).toContain('aerospike-backup: s3://backups/aerospike/T1 complete: 42 records in 2 files');
  });

  test('only backups older than the newest keepNewest complete ones are tagged for expiry (none when backups stop)', () => {
    principal('BB9');
    // T0 incomplete, T1-T3 complete (earlier runs)
    for (const t of ['T0', 'T1', 'T2', 'T3']) {
      mkdirSync(dirOf(t), { recursive: true });
      writeFileSync(path.join(dirOf(t), 'utxo_00000.asb'), 'data');
      if (t !== 'T0') writeFileSync(path.join(dirOf(t), BACKUP_COMPLETE_MARKER), 'm');
    }
    asbackupWriting('T4');
    const r = run(renderBackupScript(o), [], { STAMP: 'T4' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const tagged = () =>
      existsSync(path.join(s3, 'tags')) ? readFileSync(path.join(s3, 'tags'), 'utf8').trim().split('\n') : [];
    // the newest 2 complete (T3, T4) stay; everything older is tagged, the incomplete T0 included
    expect(tagged().sort()).toEqual([
      'aerospike/T0/utxo_00000.asb',
      'aerospike/T1/BACKUP_COMPLETE',
      'aerospike/T1/utxo_00000.asb',
      'aerospike/T2/BACKUP_COMPLETE',
      'aerospike/T2/utxo_00000.asb',
    ]);
    expect(r.stdout).toContain('aerospike/T2 superseded');
    // backups stop (asbackup fails): nothing more is tagged, T3 and T4 never expire
    stub('asbackup', 'exit 9');
    rmSync(path.join(s3, 'tags'));
    expect(run(renderBackupScript(o), [], { STAMP: 'T5' }).status).not.toBe(0);
    expect(tagged()).toEqual([]);
  });

  test('another node skips; a failed asbackup, one without a SUMMARY or a file, or a stray object leaves no marker', () => {
    principal('AA1');
    stub('asbackup', 'exit 9');
    expect(run(renderBackupScript(o), [], { STAMP: 'T2' }).status).toBe(0);
    expect(callLog().some((l) => l.startsWith('asbackup'))).toBe(false);
    principal('BB9');
    const failed = run(renderBackupScript(o), [], { STAMP: 'T2' });
    expect(failed.status).not.toBe(0);
    expect(existsSync(path.join(dirOf('T2'), BACKUP_COMPLETE_MARKER))).toBe(false);
    expect(callLog()).not.toContain(METRIC_PUT);

    asbackupWriting('T3', FILES, false);
    const noSummary = run(renderBackupScript(o), [], { STAMP: 'T3' });
    expect(noSummary.status).toBe(1);
    expect(noSummary.stderr).toContain('asbackup wrote no SUMMARY: no BACKUP_COMPLETE');
    asbackupWriting('T4', {});
    const noFile = run(renderBackupScript(o), [], { STAMP: 'T4' });
    expect(noFile.status).toBe(1);
    expect(noFile.stderr).toContain('asbackup wrote no file: no BACKUP_COMPLETE');
    asbackupWriting('T5', { ...FILES, '-x.asb': 'option-like' });
    const stray = run(renderBackupScript(o), [], { STAMP: 'T5' });
    expect(stray.status).toBe(1);
    expect(stray.stderr).toContain('unexpected object aerospike/T5/-x.asb: no BACKUP_COMPLETE');
    for (const t of ['T3', 'T4', 'T5']) expect(existsSync(path.join(dirOf(t), BACKUP_COMPLETE_MARKER))).toBe(false);
    expect(callLog()).not.toContain(METRIC_PUT);
  });

  test('restore: a complete backup is restored with asrestore; an incomplete one or a bad name is refused', () => {
    principal('BB9');
    asbackupWriting('T3');
    expect(run(renderBackupScript(o), [], { STAMP: 'T3' }).status).toBe(0);
    stub('asrestore');
    const ok = run(renderRestoreScript(o), ['T3']);
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain(
      'aerospike-restore: s3://backups/aerospike/T3 matches its manifest: 2 files, 42 records',
    );
    expect(callLog()).toContain(
      // the backup's compression: asrestore refuses a zstd file it was not told about ("Invalid version line")
      'asrestore --namespace utxo --directory s3://backups/aerospike/T3 --s3-region eu-west-1 --compress zstd',
    );

    mkdirSync(dirOf('T4'), { recursive: true }); // asbackup died: no marker
    const incomplete = run(renderRestoreScript(o), ['T4']);
    expect(incomplete.status).toBe(1);
    expect(incomplete.stderr).toContain('has no BACKUP_COMPLETE: an incomplete or missing backup, refused');
    for (const bad of ['../T3', 'T3;rm', '']) expect(run(renderRestoreScript(o), [bad]).status).not.toBe(0);
    expect(callLog().filter((l) => l.startsWith('asrestore'))).toHaveLength(1);
  });

  test('restore refuses, before asrestore runs, a backup that is not its manifest (truncated, added to, altered)', () => {
    principal('BB9');
    stub('asrestore');
    const cases: { name: string; change: (dir: string) => void; refusal: string }[] = [
      {
        name: 'a file missing',
        change: (d) => rmSync(path.join(d, 'utxo_00001.asb')),
        refusal: 'lacks files its manifest lists: utxo_00001.asb',
      },
      {
        name: 'a file added',
        change: (d) => writeFileSync(path.join(d, 'utxo_00002.asb'), 'x'),
        refusal: 'holds files its manifest does not list: utxo_00002.asb',
      },
      {
        name: 'a file cut short',
        change: (d) => writeFileSync(path.join(d, 'utxo_00000.asb'), 'first'),
        refusal: "holds files whose size is not the manifest's: utxo_00000.asb",
      },
      {
        name: 'a file altered, same size',
        change: (d) => writeFileSync(path.join(d, 'utxo_00001.asb'), 'second, LONGER file\n'),
        refusal: "holds utxo_00001.asb whose SHA-256 is not the manifest's",
      },
      {
        name: 'a marker without a manifest (the format before manifests)',
        change: (d) => writeFileSync(path.join(d, BACKUP_COMPLETE_MARKER), 'namespace=utxo\nnode=BB9\nfinished=x\n'),
        refusal: 'has a BACKUP_COMPLETE without a manifest',
      },
      {
        name: 'a manifest line naming a path',
        change: (d) =>
          writeFileSync(
            path.join(d, BACKUP_COMPLETE_MARKER),
            `records=1\nfile=${sha256('x')} 1 ../T1/utxo_00000.asb\n`,
          ),
        refusal: 'has a malformed manifest line',
      },
      {
        name: 'a manifest naming a file twice',
        change: (d) =>
          writeFileSync(
            path.join(d, BACKUP_COMPLETE_MARKER),
            marker(path.basename(d)).replace(/^(file=.* utxo_00000\.asb)$/m, '$1\n$1'),
          ),
        refusal: 'has a manifest naming a file twice: utxo_00000.asb',
      },
    ];
    asbackupWriting('M');
    expect(run(renderBackupScript(o), [], { STAMP: 'M' }).status).toBe(0);
    cases.forEach((c, i) => {
      // a copy of the complete backup M, changed
      const stamp = `M${i}`;
      cpSync(dirOf('M'), dirOf(stamp), { recursive: true });
      c.change(dirOf(stamp));
      const r = run(renderRestoreScript(o), [stamp]);
      expect({ case: c.name, status: r.status, stderr: r.stderr.trim() }).toEqual({
        case: c.name,
        status: 1,
        stderr: `aerospike-restore: s3://backups/aerospike/${stamp} ${c.refusal}, refused`,
      });
    });
    expect(callLog().filter((l) => l.startsWith('asrestore'))).toEqual([]);
  });
});

test('bash is available (these tests run the scripts, they do not only read them)', () => {
  expect(execFileSync('bash', ['-c', 'echo ok'], { encoding: 'utf8' })).toBe('ok\n');
});

test('N7: a value a script names is one shell word, whatever it holds (shq)', () => {
  for (const value of ["Bsv'$(id>/tmp/pwn)'X", 'a b', '`x`', '$HOME', "''", 'a\\b', '-n'])
    expect(execFileSync('bash', ['-c', `printf '%s' ${shq(value)}`]).toString()).toBe(value);
  const script = renderBackupScript({
    bucket: 'b',
    prefix: 'aerospike',
    namespace: 'utxo',
    metric: { namespace: "Bsv'$(id)'/Aerospike", clusterName: 'c' },
    keepNewest: 2,
  });
  expect(script).toContain(`--namespace 'Bsv'\\''$(id)'\\''/Aerospike'`);
});
