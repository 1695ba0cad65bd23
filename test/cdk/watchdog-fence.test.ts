/**
 * The guard's fence (lib/store/ack-guard.ts FENCE_MS, decision 0009) against the node watchdog and the deployed
 * heartbeat: a node that does not answer is tolerated only once the process has seen the majority's cluster for
 * FENCE_MS, which must cover an orphan's whole life: it notices the cut at most a heartbeat timeout and a clustering
 * quantum after the majority re-formed, is observed unstable within a poll and a question's timeout, and is killed
 * UNSTABLE_MS later, after one more question to the other nodes.
 */
import { renderAerospikeConf } from '../../cdk/aerospike-scripts';
import { WATCHDOG } from '../../cdk/node-watchdog';
import { FENCE_MS } from '../../lib/store/ack-guard';

function heartbeatTimeoutMs(): number {
  const conf = renderAerospikeConf({
    clusterName: 'utxo',
    seeds: ['a', 'b', 'c'],
    namespace: 'utxo',
    replicationFactor: 2,
    minClusterSize: 2,
    protoFdMax: 15000,
    nsupPeriodSeconds: 120,
    maxRecordSize: 1048576,
  });
  const interval = Number(/^\s*interval (\d+)$/m.exec(conf)?.[1]);
  const timeout = Number(/^\s*timeout (\d+)$/m.exec(conf)?.[1]);
  expect(interval).toBeGreaterThan(0);
  expect(timeout).toBeGreaterThan(0);
  return interval * timeout;
}

/** a clustering quantum: how much later than the majority an orphan may notice it was left out (decision 0007) */
const QUANTUM_MS = 3300;

test('FENCE_MS covers the orphan: a heartbeat timeout and a quantum late, a poll and a question, then the unstable kill', () => {
  const orphanKilledBy =
    heartbeatTimeoutMs() +
    QUANTUM_MS +
    WATCHDOG.pollMs +
    WATCHDOG.infoTimeoutMs +
    WATCHDOG.unstableMs +
    // the question to the other nodes before an unstable kill (unstableKillAllowed)
    WATCHDOG.peerAnswerTimeoutMs;
  expect(FENCE_MS).toBeGreaterThanOrEqual(orphanKilledBy);
  // and not much more: every new process refuses for FENCE_MS while a node is down
  expect(FENCE_MS).toBeLessThanOrEqual(orphanKilledBy + 1000);
});
