/**
 * The partition harness's pure parts: why it refuses to run (ASD_BIN, root, `ip netns`), and each node's conf being
 * the deployment's (cdk/aerospike-scripts.ts) with its own addresses and paths. The experiment itself needs a server
 * binary and network namespaces: `npm run partition` (docs/reliability.md), skipped with a printed reason here.
 */
import { aerospikeConfSettings, defaultConfig } from '../../cdk/config';
import { Cluster, nodeConf, preconditions } from '../../scripts/partition/cluster';
import { rollingRestart, RollingRestartError, type NemesisContext } from '../../scripts/partition/nemesis';
import { harnessDeployment } from '../../scripts/partition/settings';
import { retriedPut } from '../../scripts/partition/filler';

const d = defaultConfig('partition');
const options = {
  asdBin: '/nonexistent/asd',
  prefix: 'us19',
  workDir: '/tmp/us19/test',
  // as scripts/partition/run.ts: RF 2 (issue 27's figures), not the deployment's default 3
  conf: aerospikeConfSettings({ ...d.aerospike, replicationFactor: 2 }, d.store, 'utxo-partition', []),
};

test('the harness refuses without ASD_BIN, naming it', () => {
  expect(preconditions({})).toMatch(/ASD_BIN is not set/);
  expect(preconditions({ ASD_BIN: '/nonexistent/asd' })).toMatch(/does not exist/);
  const reason = preconditions();
  console.log(`partition experiment: ${reason ? `skipped here: ${reason}` : 'runnable here (npm run partition)'}`);
});

test("each node's conf is the deployment's: RF, min-cluster-size, heartbeat; its own addresses, paths, node id", () => {
  const cluster = new Cluster(options);
  const [n1, n2] = cluster.nodes;
  const conf = nodeConf(options, n1, cluster.nodes);
  expect(conf).toContain('replication-factor 2');
  expect(conf).toContain('min-cluster-size 2');
  expect(conf).toMatch(/interval 150\n\s+timeout 20/);
  for (const n of cluster.nodes) expect(conf).toContain(`mesh-seed-address-port ${n.address} 3002`);
  expect(conf).toContain(`access-address ${n1.address}`);
  expect(conf).toContain('node-id a1');
  expect(conf).toContain(`file ${n1.dir}/data.dat`);
  expect(conf).not.toContain('@DEVICES@');
  expect(nodeConf(options, n2, cluster.nodes)).toContain(`access-address ${n2.address}`);
  expect(cluster.hosts).toBe('10.19.0.11:3000,10.19.0.12:3000,10.19.0.13:3000');
});

test('loopbackService: the service also on 127.0.0.1 in the node namespace (the drill: tools called without -h)', () => {
  const cluster = new Cluster(options);
  const service = (conf: string) => conf.slice(conf.indexOf('    service {'), conf.indexOf('    heartbeat {'));
  const plain = nodeConf(options, cluster.nodes[0], cluster.nodes);
  const loopback = nodeConf({ ...options, loopbackService: true }, cluster.nodes[0], cluster.nodes);
  expect(service(plain)).not.toContain('127.0.0.1');
  expect(service(loopback)).toMatch(
    /address 10\.19\.0\.11\n\s+access-address 10\.19\.0\.11\n\s+address 127\.0\.0\.1\n/,
  );
  expect(loopback.replace('        address 127.0.0.1\n', '')).toBe(plain);
});

test('extra conf lines of a settings profile land in their sections', () => {
  const cluster = new Cluster(options);
  const conf = nodeConf(
    {
      ...options,
      extra: { service: ['migrate-fill-delay 0'], namespace: ['conflict-resolution-policy last-update-time'] },
    },
    cluster.nodes[0],
    cluster.nodes,
  );
  expect(conf).toMatch(/service \{\n(\s+.*\n)*?\s+migrate-fill-delay 0/);
  expect(conf).toMatch(/namespace utxo \{\n\s+conflict-resolution-policy last-update-time/);
});

test('--rf sets the replication factor of every node and keeps min-cluster-size the majority; bad values are named', () => {
  const d3 = harnessDeployment(3);
  const o3 = { ...options, conf: aerospikeConfSettings(d3.aerospike, d3.store, 'utxo-partition', []) };
  const cluster = new Cluster(o3);
  const conf = nodeConf(o3, cluster.nodes[0], cluster.nodes);
  expect(conf).toContain('replication-factor 3');
  expect(conf).toContain('min-cluster-size 2');
  expect(harnessDeployment().aerospike.replicationFactor).toBe(2);
  expect(() => harnessDeployment(4)).toThrow(/--rf: expected an integer from 1 to 3/);
  expect(() => harnessDeployment(0)).toThrow(/--rf/);
});

describe('rolling restart (the runbook: the next node only when migrations are done)', () => {
  const context = (answer: (command: string) => string) => {
    const stopped: number[] = [];
    const cluster = {
      nodes: [1, 2, 3].map((index) => ({ index })),
      kill: (index: number) => {
        stopped.push(index);
        return Promise.resolve();
      },
      info: (_index: number, command: string) => Promise.resolve(answer(command)),
    };
    const c = {
      cluster,
      watchdog: { startNode: () => undefined },
      faultMs: 0,
      log: () => undefined,
    } as unknown as NemesisContext;
    return { c, stopped };
  };

  test('restarts nodes 1, 2, 3 in turn once each settles', async () => {
    const { c, stopped } = context(() => 'ABC123');
    const steps = await rollingRestart(c, 5000);
    expect(stopped).toEqual([1, 2, 3]);
    expect(steps.map((s) => s.node)).toEqual([1, 2, 3]);
  });

  test('fails loudly, without stopping the next node, when migrations are not done within the budget', async () => {
    const { c, stopped } = context((cmd) => (cmd.includes('ignore-migrations=false') ? 'ERROR' : 'ABC123'));
    await expect(rollingRestart(c, 600)).rejects.toThrow(
      /node 1 rejoined after \d+ ms, but migrations were not done within 600 ms/,
    );
    await expect(rollingRestart(c, 600)).rejects.toBeInstanceOf(RollingRestartError);
    expect(stopped).toEqual([1, 1]);
  });
});

test('the filler sends a put again after stop-writes, a timeout or an unavailable partition, for up to 5 minutes', () => {
  const at = 1_000_000;
  for (const code of [8, 9, 11]) {
    expect(retriedPut({ code }, at, at + 1000)).toBe(true);
    expect(retriedPut({ code }, at, at + 300_001)).toBe(false);
  }
  // anything else (a bad bin, a record too big, an error without a status) fails the fill at once
  for (const err of [{ code: 4 }, { code: 13 }, new Error('x'), null]) expect(retriedPut(err, at, at)).toBe(false);
});
