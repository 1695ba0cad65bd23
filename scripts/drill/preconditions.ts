/**
 * Why the drill cannot run here (null: it can), and where its tools are. It needs what the partition harness needs
 * (ASD_BIN, root, `ip netns`: scripts/partition/cluster.ts), asbackup and asrestore built with S3 support (in
 * AEROSPIKE_TOOLS_DIR, else on PATH; docs/reliability.md "Building asbackup and asrestore"), the aws CLI and
 * sha256sum (the deployed scripts call them).
 */
import { accessSync, constants } from 'fs';
import * as path from 'path';
import { preconditions as clusterPreconditions } from '../partition/cluster';

export interface DrillTools {
  /** the directory holding asbackup and asrestore */
  toolsDir: string;
  /** the directory holding the aws CLI */
  awsDir: string;
}

const executable = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The directory on `pathList` (a PATH value) holding an executable `name`, if any. */
export function findOnPath(name: string, pathList: string | undefined): string | undefined {
  return (pathList ?? '').split(':').find((dir) => dir !== '' && executable(path.join(dir, name)));
}

export function drillTools(env: NodeJS.ProcessEnv = process.env): DrillTools | string {
  let toolsDir: string | undefined;
  if (env.AEROSPIKE_TOOLS_DIR) {
    toolsDir = env.AEROSPIKE_TOOLS_DIR;
    for (const tool of ['asbackup', 'asrestore'])
      if (!executable(path.join(toolsDir, tool))) return `AEROSPIKE_TOOLS_DIR=${toolsDir} holds no executable ${tool}`;
  } else {
    toolsDir = findOnPath('asbackup', env.PATH);
    if (!toolsDir || !executable(path.join(toolsDir, 'asrestore')))
      return 'asbackup and asrestore are not on PATH and AEROSPIKE_TOOLS_DIR is not set (build them with S3 support: docs/reliability.md, "Building asbackup and asrestore")';
  }
  const awsDir = findOnPath('aws', env.PATH);
  if (!awsDir) return 'the aws CLI is not on PATH (the backup and restore scripts call it)';
  if (!findOnPath('sha256sum', env.PATH)) return 'sha256sum is not on PATH (the scripts hash every backup file)';
  return { toolsDir, awsDir };
}

/** The reason the drill is skipped, or the tools it runs with. */
export function drillPreconditions(env: NodeJS.ProcessEnv = process.env): DrillTools | string {
  const cluster = clusterPreconditions(env);
  if (cluster) return cluster;
  return drillTools(env);
}
