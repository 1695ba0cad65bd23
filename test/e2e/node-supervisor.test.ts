/**
 * The e2e harness's systemd stand-in (scripts/e2e/node-supervisor.ts) restarts asd as the cluster stack's drop-in
 * says, read from the bootstrap script the nodes run: Restart=on-failure after RestartSec (the watchdog's kill is
 * followed by a start through check-start), and no restart without that drop-in (the package's unit alone).
 */
import { renderBootstrap } from '../../cdk/aerospike-scripts';
import type { Pins } from '../../cdk/node-pins';
import { RESTART_SECONDS } from '../../cdk/node-watchdog';
import { restartPolicy } from '../../scripts/e2e/node-supervisor';

const bootstrap = renderBootstrap({
  prefix: '/p',
  logGroupName: 'g',
  pins: { stackName: 'S', logicalIds: {} as Pins['logicalIds'] },
});

test("the bootstrap's drop-in: restart after a failure, RestartSec as rendered", () => {
  expect(restartPolicy(bootstrap)).toEqual({ restartMs: RESTART_SECONDS * 1000 });
});

test('without Restart=on-failure in the drop-in, or without the drop-in, no restart', () => {
  expect(restartPolicy(bootstrap.replace('Restart=on-failure\n', ''))).toEqual({});
  expect(restartPolicy('#!/bin/bash\nsystemctl start aerospike\n')).toEqual({});
});
