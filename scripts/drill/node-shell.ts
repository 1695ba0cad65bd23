/**
 * Running the deployed node scripts as a node runs them: the script text rendered by cdk/backup-scripts.ts, written to
 * a file and run with bash inside the node's network namespace (`ip netns exec`), where 127.0.0.1:3000 is its own
 * Aerospike (the cluster's `loopbackService`) as on a node. What differs from a node is only the environment:
 *  - PATH: this asinfo (asinfo.ts) first, then the directory holding asbackup and asrestore, then the aws CLI's;
 *  - the S3 endpoint: the emulator on the bridge address (on a node, S3 itself): the aws CLI through
 *    AWS_ENDPOINT_URL_S3, asbackup and asrestore through `s3-endpoint-override` in the tools' own configuration file
 *    ($HOME/.aerospike/astools.conf, which they read before their arguments), so the scripts run unchanged;
 *  - CloudWatch points at a closed port: the BackupCompleted metric fails, which the script allows (it says so);
 *  - REGION and static credentials, as IMDS and the instance role give them on a node.
 */
import { spawn } from 'child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'fs';
import * as path from 'path';

export interface NodeShellOptions {
  runDir: string;
  /** the directory holding asbackup and asrestore */
  toolsDir: string;
  /** the directory of the aws CLI */
  awsDir: string;
  /** http://<bridge address>:<port> */
  s3Endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  log: (line: string) => void;
}

export interface ScriptRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export class NodeShell {
  private readonly bin: string;
  private readonly home: string;
  private count = 0;

  constructor(private readonly o: NodeShellOptions) {
    this.bin = path.join(o.runDir, 'bin');
    this.home = path.join(o.runDir, 'home');
    mkdirSync(this.bin, { recursive: true });
    mkdirSync(path.join(this.home, '.aerospike'), { recursive: true });
    const repo = path.resolve(__dirname, '..', '..');
    const asinfo = path.join(this.bin, 'asinfo');
    writeFileSync(
      asinfo,
      `#!/bin/bash\ncd '${repo}' && exec '${process.execPath}' --import tsx scripts/drill/asinfo.ts "$@"\n`,
    );
    chmodSync(asinfo, 0o755);
    const override = `s3-endpoint-override = "${o.s3Endpoint}"`;
    writeFileSync(
      path.join(this.home, '.aerospike', 'astools.conf'),
      `[asbackup]\n${override}\n\n[asrestore]\n${override}\n`,
    );
  }

  env(): Record<string, string> {
    return {
      PATH: [this.bin, this.o.toolsDir, this.o.awsDir, '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
      HOME: this.home,
      REGION: this.o.region,
      AWS_ACCESS_KEY_ID: this.o.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: this.o.credentials.secretAccessKey,
      AWS_ENDPOINT_URL_S3: this.o.s3Endpoint,
      AWS_ENDPOINT_URL_CLOUDWATCH: 'http://127.0.0.1:9',
      AWS_MAX_ATTEMPTS: '2',
      AWS_EC2_METADATA_DISABLED: 'true',
      ...(process.env.PYENV_ROOT ? { PYENV_ROOT: process.env.PYENV_ROOT } : {}),
    };
  }

  /** Runs `script` with bash in `netns` (as root, like SSM's aws:runShellScript); its output is logged as it comes. */
  run(netns: string, script: string, args: string[], label: string, extraEnv: Record<string, string> = {}) {
    const file = path.join(this.o.runDir, `${label}-${++this.count}.sh`);
    writeFileSync(file, script, { mode: 0o700 });
    const started = Date.now();
    return new Promise<ScriptRun>((resolve) => {
      const child = spawn('ip', ['netns', 'exec', netns, 'bash', file, ...args], {
        env: { ...this.env(), ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      const relay = (stream: 'out' | 'err') => (d: Buffer) => {
        const text = d.toString();
        if (stream === 'out') stdout += text;
        else stderr += text;
        for (const line of text.split('\n'))
          if (line.trim()) this.o.log(`[${label}${stream === 'err' ? ' !' : ''}] ${line}`);
      };
      child.stdout.on('data', relay('out'));
      child.stderr.on('data', relay('err'));
      child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr, ms: Date.now() - started }));
    });
  }
}
