import fc from 'fast-check';
import { readFileSync } from 'fs';
import * as path from 'path';
import {
  deploymentOn,
  plan,
  PHASES,
  type CapacityInputs,
  type Deployment,
  type Edition,
  type InstanceType,
  type PhaseInput,
} from '../../bench/capacity/model';
import { CAPACITY_INPUTS, TARGET_RATES } from '../../bench/capacity/inputs';
import { capacityTable } from '../../bench/capacity/table';

const SMALL: InstanceType = {
  name: 'x.small',
  vcpus: 4,
  memoryGiB: 16,
  instanceStoreGB: 1000,
  baselineGbps: 10,
  usdPerHour: 1,
};
const LARGE: InstanceType = {
  name: 'x.large',
  vcpus: 16,
  memoryGiB: 64,
  instanceStoreGB: 4000,
  baselineGbps: 20,
  usdPerHour: 3.5,
};

const phase = (p: Partial<PhaseInput> & Pick<PhaseInput, 'phase'>): PhaseInput => ({
  functionCpuUs: 0,
  asdCpuUs: 0,
  asdReplicaCpuUs: 0,
  txsPerInvocation: 1000,
  scheduled: false,
  viaApi: true,
  memoryMb: 1769,
  requestBytesPerTx: 1000,
  ...p,
});

/** Round figures, so that a row can be computed by hand (below). */
const HAND: CapacityInputs = {
  phases: [
    phase({ phase: 'create', functionCpuUs: 100, asdCpuUs: 50, asdReplicaCpuUs: 10 }),
    phase({ phase: 'spend', functionCpuUs: 50, asdCpuUs: 40, asdReplicaCpuUs: 10 }),
    phase({ phase: 'setMined', functionCpuUs: 20, asdCpuUs: 30, txsPerInvocation: 10000, requestBytesPerTx: 70 }),
    phase({ phase: 'cleanup', functionCpuUs: 30, asdCpuUs: 80, scheduled: true, viaApi: false }),
  ],
  measuredRf: 2,
  rf: 3,
  recordDeviceBytes: 500,
  recordRamBytes: 100,
  recordsPerTx: 1,
  retentionSeconds: 1000,
  wireBytesPerTx: 2000,
  wireReplicaBytesPerTx: 500,
  crossAzShare: 1 / 3,
  connectionsPerEnvironment: 33,
  protoFdMax: 15000,
  connectionBudgetShare: 0.8,
  toolsConnections: 256,
  otherReservedConcurrency: 100,
  nodeCpuTarget: 0.5,
  nodeMemoryTarget: 0.5,
  nodeDeviceTarget: 0.5,
  nodeNetworkTarget: 0.5,
  functionCpuShare: 0.5,
  lambdaMbPerVcpu: 1769,
  lambdaAccountConcurrency: 1000,
  lambdaUnreserved: 100,
  apiGatewayAccountRps: 10000,
  apiStageRps: 1000,
  lambdaRequestLimitBytes: 6e6,
  lambdaFileDescriptors: 1024,
  cleanupMaxShards: 16,
  scheduleSeconds: 60,
  partitions: 4096,
  communityMaxNodes: 8,
  communityMaxDeviceBytesPerNode: 640e9,
  instanceTypes: [SMALL],
  prices: {
    source: 'test',
    lambdaGbSecond: 0.0000166667,
    lambdaRequest: 0.2e-6,
    apiGatewayRequest: 3.5e-6,
    crossAzPerGbEachWay: 0.01,
    sqsRequest: 0.4e-6,
    s3Request: 5e-6,
  },
};

describe('one row computed by hand: 100,000 txs a second, RF 3 from figures measured at RF 2', () => {
  const d = deploymentOn(HAND, 100_000, SMALL, 'enterprise');

  test('the nodes: CPU binds (220 us a tx = 22 vCPUs, 2 a node at 50 %: 11 nodes)', () => {
    // asd per tx at RF 3: 50 + 40 + 30 + 80 and one more copy of create and spend (10 + 10) = 220 us
    expect(d.asdVcpus).toBeCloseTo(22, 9);
    // records alive 1e8 (100k/s for 1000 s) x 3 copies x 100 B = 3e10 B of index over 8 GiB a node: 4 nodes
    // device 1.5e11 B over 500 GB a node: 1; wire 2500 B a tx = 2 Gbps over 5 Gbps a node: 1
    expect(d.nodesBy).toEqual({ cpu: 11, memory: 4, device: 1, network: 1, replication: 3 });
    expect([d.nodes, d.binds]).toEqual([11, 'cpu']);
    expect(d.recordsAlive).toBe(1e8);
    expect(d.deviceBytes).toBe(1.5e11);
    expect(d.perNodeGbps).toBeCloseTo(2 / 11, 9);
  });

  test('the functions, the API and the connections', () => {
    // one vCPU at 1769 MB; CPU half of the billed time: create 100 us x 1e5 / 0.5 = 20 environments
    expect(d.concurrency).toEqual({ create: 20, spend: 10, setMined: 4, cleanup: 6 });
    // 100 create + 100 spend + 10 setMined requests a second (cleanup is scheduled, not through the API)
    expect(d.apiRps).toBeCloseTo(210, 9);
    // (40 environments + 100 others) x 33 + 256 tools
    expect(d.connectionsPerNode).toBe(4876);
  });

  test('the cost per hour and per million txs', () => {
    const c = d.cost;
    expect(c.ec2).toBe(11);
    // 40 environments x 1769/1024 GB x $0.0000166667 x 3600 s
    expect(c.lambdaDuration).toBeCloseTo(4.14610204, 6);
    // 210 requests + 6 cleanup shards a minute, $0.20 per million
    expect(c.lambdaRequests).toBeCloseTo(0.151272, 6);
    expect(c.apiGateway).toBeCloseTo(2.646, 9);
    // 2 Gbps = 0.25 GB/s on the nodes' wires, a third of it across AZs, $0.01 each way: $6 an hour
    expect(c.crossAz).toBeCloseTo(6, 9);
    expect(c.total).toBeCloseTo(23.94337404, 6);
    // 360 million txs an hour
    expect(c.perMillionTxs).toBeCloseTo(23.94337404 / 360, 9);
  });

  test('every limit is listed, most used first; on Community Edition 11 nodes do not fit', () => {
    expect(d.fits).toBe(true);
    expect(d.limits[0].name).toMatch(/^connections per node/);
    expect(d.limits.map((l) => l.use)).toEqual([...d.limits.map((l) => l.use)].sort((a, b) => b - a));
    const ce = plan(HAND, 100_000, 'community');
    expect(ce.fits).toBe(false);
    expect(ce.limits[0]).toMatchObject({ name: 'CE nodes', need: 11, limit: 8, shape: true });
  });

  test('a bad rate and an empty instance list are refused, naming them', () => {
    expect(() => plan(HAND, 0, 'enterprise')).toThrow(/rate/);
    expect(() => plan({ ...HAND, instanceTypes: [] }, 1, 'enterprise')).toThrow(/instanceTypes/);
  });
});

/** Inputs around the hand row's: every per-tx figure scaled by its own factor, two instance types. */
const inputs = fc
  .record({
    scale: fc.array(fc.double({ min: 0.1, max: 10, noNaN: true }), { minLength: 12, maxLength: 12 }),
    rf: fc.integer({ min: 1, max: 4 }),
    memoryMb: fc.constantFrom(512, 1024, 1769, 3008),
  })
  .map(({ scale, rf, memoryMb }): CapacityInputs => ({
    ...HAND,
    rf,
    phases: HAND.phases.map((p, k) => ({
      ...p,
      functionCpuUs: p.functionCpuUs * scale[k],
      asdCpuUs: p.asdCpuUs * scale[4 + k],
      asdReplicaCpuUs: p.asdReplicaCpuUs * scale[4 + k],
      memoryMb,
    })),
    recordDeviceBytes: HAND.recordDeviceBytes * scale[8],
    recordRamBytes: HAND.recordRamBytes * scale[9],
    wireBytesPerTx: HAND.wireBytesPerTx * scale[10],
    retentionSeconds: HAND.retentionSeconds * scale[11],
    instanceTypes: [SMALL, LARGE],
  }));
const rates = fc.tuple(fc.double({ min: 1, max: 2e6, noNaN: true }), fc.double({ min: 1, max: 100, noNaN: true }));
const editions = fc.constantFrom<Edition>('community', 'enterprise');
/** plan() chooses among the clusters whose shape fits; the rate where none does is compared apart (below) */
const shapeFits = (d: Deployment) => d.limits.every((l) => !l.shape || l.use <= 1);

describe('invariants (fast-check)', () => {
  test('never fewer nodes than copies of a record', () => {
    fc.assert(
      fc.property(inputs, rates, editions, (i, [r], e) => {
        expect(plan(i, r, e).nodes).toBeGreaterThanOrEqual(i.rf);
      }),
    );
  });

  test('monotone in the rate: nodes on each type, the cheapest cluster, functions, requests, connections', () => {
    fc.assert(
      fc.property(inputs, rates, editions, (i, [r, k], e) => {
        const [lo, hi] = [r, r * k];
        for (const t of i.instanceTypes)
          expect(deploymentOn(i, hi, t, e).nodes).toBeGreaterThanOrEqual(deploymentOn(i, lo, t, e).nodes);
        const [a, b] = [plan(i, lo, 'enterprise'), plan(i, hi, 'enterprise')];
        if (shapeFits(b)) expect(b.cost.ec2).toBeGreaterThanOrEqual(a.cost.ec2);
        expect(b.totalConcurrency).toBeGreaterThanOrEqual(a.totalConcurrency);
        expect(b.apiRps).toBeGreaterThanOrEqual(a.apiRps);
        expect(b.connectionsPerNode).toBeGreaterThanOrEqual(a.connectionsPerNode);
        expect(b.deviceBytes).toBeGreaterThanOrEqual(a.deviceBytes);
      }),
    );
  });

  test('cost per million txs does not rise with the rate, but for one whole node, while the type still fits', () => {
    // Everything but the nodes is a per-tx figure times the rate, so its share per million txs is flat; nodes come
    // whole, so past a step the cost per million can rise by at most one node of the lower rate's type (the cheapest
    // cluster at the higher rate costs at most that type's count, which is ceil of a linear need)
    fc.assert(
      fc.property(inputs, rates, (i, [r, k]) => {
        const [lo, hi] = [r, r * k];
        const [a, b] = [plan(i, lo, 'enterprise'), plan(i, hi, 'enterprise')];
        // the lower rate's type must still fit at the higher: where its cluster outgrows a function's file descriptors,
        // a dearer type is taken and the cost per million rises (found by this property before it said so)
        fc.pre(shapeFits(b) && shapeFits(deploymentOn(i, hi, a.instance, 'enterprise')));
        const millionsAnHour = (hi * 3600) / 1e6;
        const slack = (a.instance.usdPerHour + (3600 / i.scheduleSeconds) * i.prices.lambdaRequest) / millionsAnHour;
        expect(b.cost.perMillionTxs).toBeLessThanOrEqual(a.cost.perMillionTxs + slack + 1e-12);
      }),
    );
  });
});

test('past the rate where no cluster shape fits, plan() takes the least exceeded, and says so', () => {
  // 2e6 txs/s of the hand row: SMALL needs 220 nodes by CPU (440 file descriptors), so cap the descriptors at 100
  const i = { ...HAND, lambdaFileDescriptors: 100, instanceTypes: [SMALL, LARGE] };
  const d = plan(i, 2e6, 'enterprise');
  expect(d.instance.name).toBe('x.large');
  expect(d.fits).toBe(false);
  expect(d.limits.find((l) => l.name === 'file descriptors per function environment')!.use).toBeGreaterThan(1);
});

describe('the measured inputs (bench/capacity/inputs.ts)', () => {
  test('every phase is there once, with positive figures', () => {
    expect(CAPACITY_INPUTS.phases.map((p) => p.phase)).toEqual([...PHASES]);
    for (const p of CAPACITY_INPUTS.phases) {
      expect(p.functionCpuUs).toBeGreaterThan(0);
      expect(p.asdCpuUs).toBeGreaterThan(0);
    }
    expect(TARGET_RATES).toEqual([10_000, 100_000, 1_000_000]);
  });

  test('the million row needs more than Community Edition allows, and says which limit', () => {
    const ce = plan(CAPACITY_INPUTS, 1_000_000, 'community');
    expect(ce.fits).toBe(false);
    expect(ce.limits[0].name).toMatch(/^CE /);
  });

  test('docs/performance.md shows the table the model prints (BENCH_ONLY=capacity npm run bench)', () => {
    const doc = readFileSync(path.join(__dirname, '../../docs/performance.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Capacity to a million txs a second'));
    const start = section.indexOf('| block txs a second');
    const table = section.slice(start, section.indexOf('\n\n', start));
    expect(table).toBe(capacityTable(CAPACITY_INPUTS, TARGET_RATES));
  });
});
