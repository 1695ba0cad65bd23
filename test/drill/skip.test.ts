/**
 * When the drill cannot run it says why and exits 0 (so `npm run drill` in CI is a printed skip, never a silent
 * pass): no ASD_BIN, not root, no `ip netns`, no asbackup/asrestore, no aws CLI. The real run needs all of them
 * (docs/reliability.md "Backup and restore"); this prints whether this machine has them.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { drillPreconditions, drillTools } from '../../scripts/drill/preconditions';

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'drill-tools-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const executable = (name: string) => {
  writeFileSync(path.join(dir, name), '#!/bin/sh\n');
  chmodSync(path.join(dir, name), 0o755);
};

test('the drill names what it lacks: the server, then the tools', () => {
  expect(drillPreconditions({})).toMatch(/ASD_BIN is not set/);
  expect(drillTools({ PATH: dir })).toMatch(
    /asbackup and asrestore are not on PATH and AEROSPIKE_TOOLS_DIR is not set/,
  );
  executable('asbackup');
  expect(drillTools({ AEROSPIKE_TOOLS_DIR: dir, PATH: dir })).toBe(
    `AEROSPIKE_TOOLS_DIR=${dir} holds no executable asrestore`,
  );
  executable('asrestore');
  expect(drillTools({ AEROSPIKE_TOOLS_DIR: dir, PATH: dir })).toMatch(/the aws CLI is not on PATH/);
  executable('aws');
  expect(drillTools({ PATH: dir })).toMatch(/sha256sum is not on PATH/);
  executable('sha256sum');
  expect(drillTools({ PATH: `/nonexistent:${dir}` })).toEqual({ toolsDir: dir, awsDir: dir });
  const here = drillPreconditions();
  console.log(
    `drill: ${typeof here === 'string' ? `skipped here: ${here}` : `runnable here (npm run drill), tools in ${here.toolsDir}`}`,
  );
});

test('`npm run drill` without ASD_BIN prints why it skips and exits 0', () => {
  const env = { ...process.env };
  delete env.ASD_BIN;
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/drill/run.ts', '--records', '10'], {
    cwd: path.resolve(__dirname, '..', '..'),
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  console.log(r.stdout.trim());
  expect(r.stdout).toContain('drill: skipped: ASD_BIN is not set');
  expect(r.status).toBe(0);
});
