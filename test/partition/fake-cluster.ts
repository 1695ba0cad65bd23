/**
 * Three nodes as the harness watchdog sees them (scripts/partition/cluster.ts Cluster), no processes: node 1 runs
 * (pid 101), `kill` and `start` are recorded. `cutOff`: node 1's namespace cannot reach the other two (the harness
 * itself still reaches every node).
 */
import type { Cluster } from '../../scripts/partition/cluster';

export function fakeCluster(options: { cutOff?: boolean } = {}) {
  const pids = new Map<number, number>([[1, 101]]);
  const starts: { index: number; wipe: boolean }[] = [];
  const kills: { index: number; at: number }[] = [];
  const cluster = {
    onExit: undefined as ((index: number) => void) | undefined,
    nodes: [1, 2, 3].map((index) => ({ index, address: `10.0.0.${index}` })),
    node(index: number) {
      return this.nodes[index - 1];
    },
    pid: (index: number) => pids.get(index),
    stopping: () => false,
    running: (index: number) => pids.has(index),
    reaches: (from: number) => !(options.cutOff && from === 1),
    kill(index: number) {
      pids.delete(index);
      kills.push({ index, at: Date.now() });
      setImmediate(() => cluster.onExit?.(index));
      return Promise.resolve();
    },
    start(index: number, _fresh: boolean, wipe: boolean) {
      starts.push({ index, wipe });
      pids.set(index, 200 + starts.length);
    },
  };
  return { cluster: cluster as unknown as Cluster, starts, kills };
}
