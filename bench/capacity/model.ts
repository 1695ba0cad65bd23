/**
 * The capacity model (docs/performance.md, "Capacity to a million txs a second"): from measured per-tx figures and
 * list prices, what a deployment needs for a rate of block txs a second. Pure: no I/O, every input an argument
 * (bench/capacity/inputs.ts holds the measured ones with the run each came from).
 *
 * Linear by construction: every need is a per-tx figure times the rate (CPU, wire bytes, requests) or times the rate
 * and the retention (records alive); whole machines are rounded up. The slope check (bench/capacity/slope.ts) tests
 * that linearity where one machine can: 2 against 3 nodes, 1 against several client processes.
 */

export const PHASES = ['create', 'spend', 'setMined', 'cleanup'] as const;
export type Phase = (typeof PHASES)[number];

export interface PhaseInput {
  phase: Phase;
  /** the function process's CPU per block tx in this phase, microseconds */
  functionCpuUs: number;
  /** every asd's CPU per block tx in this phase (all nodes together, at CapacityInputs.measuredRf), microseconds */
  asdCpuUs: number;
  /** what one more copy (replication factor + 1) adds to asdCpuUs, microseconds */
  asdReplicaCpuUs: number;
  /** txs one invocation carries (ignored for a scheduled phase) */
  txsPerInvocation: number;
  /** invoked on a schedule (cleanup: one invocation per shard per scheduleSeconds), not per request */
  scheduled: boolean;
  /** reached through API Gateway (the rest are scheduled or invoked directly) */
  viaApi: boolean;
  /** the function's configured memory, MB */
  memoryMb: number;
  /** request body bytes per tx (the tx's bytes in a create or spend; a txid in a setMined), against 6 MB */
  requestBytesPerTx: number;
}

export interface InstanceType {
  name: string;
  vcpus: number;
  memoryGiB: number;
  /** all NVMe instance-store devices together, GB (10^9 bytes) */
  instanceStoreGB: number;
  /** baseline network bandwidth, Gbps (the sustained figure, not the "up to" burst) */
  baselineGbps: number;
  /** on-demand Linux, USD per hour */
  usdPerHour: number;
}

export interface Prices {
  /** where and when the prices were listed */
  source: string;
  lambdaGbSecond: number;
  lambdaRequest: number;
  apiGatewayRequest: number;
  /** data crossing Availability Zones, per GB, each direction */
  crossAzPerGbEachWay: number;
  sqsRequest: number;
  s3Request: number;
}

export interface CapacityInputs {
  phases: PhaseInput[];
  /** the replication factor the asd figures and wire bytes were measured at */
  measuredRf: number;
  /** the deployment's replication factor */
  rf: number;
  /** device bytes per record copy (the namespace's data_used_bytes / objects) */
  recordDeviceBytes: number;
  /** RAM per record copy: primary index (64 B) plus the secondary indexes' share */
  recordRamBytes: number;
  /** records a block tx leaves alive (one: its master) */
  recordsPerTx: number;
  /** seconds a record stays alive: until spent and mined, then the retention, then a cleanup pass */
  retentionSeconds: number;
  /** bytes in + out of every node's network interface per block tx at measuredRf */
  wireBytesPerTx: number;
  /** what one more copy adds to wireBytesPerTx */
  wireReplicaBytesPerTx: number;
  /**
   * bytes crossing an Availability Zone per byte of wireBytesPerTx (which counts a transfer between nodes twice, out
   * of one and into the other, and one between a client and a node once)
   */
  crossAzShare: number;
  /** connections one function environment holds to each node: clientMaxConnsPerNode + 1 tend connection */
  connectionsPerEnvironment: number;
  protoFdMax: number;
  /** the connection budget's share of proto-fd-max, and what the operators' tools keep */
  connectionBudgetShare: number;
  toolsConnections: number;
  /** environments of the functions the model does not size (get, getUtxo, status, admin, signals, unspend) */
  otherReservedConcurrency: number;
  /** the share of a node's vCPUs, of its RAM for the indexes, of its device, of its baseline network the plan fills */
  nodeCpuTarget: number;
  nodeMemoryTarget: number;
  nodeDeviceTarget: number;
  nodeNetworkTarget: number;
  /** the functions' CPU time over their billed duration (the rest is waiting on Aerospike) */
  functionCpuShare: number;
  /** Lambda memory with one full vCPU, MB */
  lambdaMbPerVcpu: number;
  lambdaAccountConcurrency: number;
  /** concurrency Lambda keeps unreserved in an account */
  lambdaUnreserved: number;
  apiGatewayAccountRps: number;
  /** the API stage's own throttle (apiThrottleRateLimit) */
  apiStageRps: number;
  lambdaRequestLimitBytes: number;
  /** file descriptors one Lambda environment may open: a connection to each node at least, and its tend connection */
  lambdaFileDescriptors: number;
  /** cleanup: at most this many shards, each one invocation per schedule */
  cleanupMaxShards: number;
  scheduleSeconds: number;
  partitions: number;
  communityMaxNodes: number;
  /** Community Edition: device capacity one node may configure, bytes */
  communityMaxDeviceBytesPerNode: number;
  instanceTypes: InstanceType[];
  prices: Prices;
}

export type Edition = 'community' | 'enterprise';
export type NodeBound = 'cpu' | 'memory' | 'device' | 'network' | 'replication';

export interface Limit {
  name: string;
  need: number;
  limit: number;
  /** need / limit: above 1 the deployment does not fit it */
  use: number;
  /** decided by the cluster's shape (its instance type and node count), so plan() chooses among types by it */
  shape: boolean;
}

export interface Cost {
  ec2: number;
  lambdaDuration: number;
  lambdaRequests: number;
  apiGateway: number;
  crossAz: number;
  sqsS3: number;
  /** USD per hour */
  total: number;
  perMillionTxs: number;
}

export interface Deployment {
  rate: number;
  edition: Edition;
  instance: InstanceType;
  nodes: number;
  /** the nodes each resource needs on this instance type; `binds` is the largest */
  nodesBy: Record<NodeBound, number>;
  binds: NodeBound;
  /** vCPU-seconds per second the nodes work (all phases, at rf) */
  asdVcpus: number;
  recordsAlive: number;
  /** every copy on the devices, bytes; unique data (one copy), bytes; the indexes in RAM, bytes */
  deviceBytes: number;
  uniqueBytes: number;
  indexRamBytes: number;
  perNodeGbps: number;
  /** function environments busy at once, per phase and in all */
  concurrency: Record<Phase, number>;
  totalConcurrency: number;
  apiRps: number;
  connectionsPerNode: number;
  cost: Cost;
  /** every limit, most used first; fits when none is above 1 */
  limits: Limit[];
  fits: boolean;
}

const GIB = 2 ** 30;

/** A phase's function environments busy at a rate: CPU-seconds per second over each environment's vCPU share. */
export function phaseConcurrency(i: CapacityInputs, p: PhaseInput, rate: number): number {
  const vcpuShare = Math.min(1, p.memoryMb / i.lambdaMbPerVcpu);
  return (rate * p.functionCpuUs * 1e-6) / vcpuShare / i.functionCpuShare;
}

/** Invocations a second of a phase: one per request, or one per shard per schedule for a scheduled phase. */
export function phaseInvocations(i: CapacityInputs, p: PhaseInput, rate: number): number {
  return p.scheduled ? Math.ceil(phaseConcurrency(i, p, rate)) / i.scheduleSeconds : rate / p.txsPerInvocation;
}

/** The nodes' CPU per block tx at the deployment's replication factor, microseconds (all phases). */
export function asdCpuUsPerTx(i: CapacityInputs): number {
  return i.phases.reduce((s, p) => s + Math.max(0, p.asdCpuUs + (i.rf - i.measuredRf) * p.asdReplicaCpuUs), 0);
}

export function wireBytesPerTx(i: CapacityInputs): number {
  return Math.max(0, i.wireBytesPerTx + (i.rf - i.measuredRf) * i.wireReplicaBytesPerTx);
}

/** What every node together must hold and move at a rate, before it is split over nodes. */
export function clusterNeeds(i: CapacityInputs, rate: number) {
  const recordsAlive = rate * i.retentionSeconds * i.recordsPerTx;
  return {
    asdVcpus: (rate * asdCpuUsPerTx(i)) / 1e6,
    recordsAlive,
    deviceBytes: recordsAlive * i.rf * i.recordDeviceBytes,
    uniqueBytes: recordsAlive * i.recordDeviceBytes,
    indexRamBytes: recordsAlive * i.rf * i.recordRamBytes,
    gbps: (rate * wireBytesPerTx(i) * 8) / 1e9,
  };
}

/** The nodes each resource needs on one instance type (at least rf: one copy per node). */
export function nodesFor(
  i: CapacityInputs,
  rate: number,
  t: InstanceType,
  edition: Edition,
): Record<NodeBound, number> {
  const need = clusterNeeds(i, rate);
  const device =
    edition === 'community'
      ? Math.min(t.instanceStoreGB * 1e9, i.communityMaxDeviceBytesPerNode)
      : t.instanceStoreGB * 1e9;
  return {
    cpu: Math.ceil(need.asdVcpus / (t.vcpus * i.nodeCpuTarget)),
    memory: Math.ceil(need.indexRamBytes / (t.memoryGiB * GIB * i.nodeMemoryTarget)),
    device: Math.ceil(need.deviceBytes / (device * i.nodeDeviceTarget)),
    network: Math.ceil(need.gbps / (t.baselineGbps * i.nodeNetworkTarget)),
    replication: i.rf,
  };
}

function bindingOf(by: Record<NodeBound, number>): NodeBound {
  return (Object.keys(by) as NodeBound[]).reduce((a, b) => (by[b] > by[a] ? b : a));
}

/** The deployment on one instance type: its nodes, functions, API, connections, cost and every limit's use. */
export function deploymentOn(i: CapacityInputs, rate: number, t: InstanceType, edition: Edition): Deployment {
  const nodesBy = nodesFor(i, rate, t, edition);
  const binds = bindingOf(nodesBy);
  const nodes = nodesBy[binds];
  const need = clusterNeeds(i, rate);
  const concurrency = {} as Record<Phase, number>;
  for (const p of i.phases) concurrency[p.phase] = phaseConcurrency(i, p, rate);
  // whole environments: each holds its connections whether busy or not
  const environments = i.phases.reduce((s, p) => s + Math.ceil(concurrency[p.phase]), 0);
  const totalConcurrency = i.phases.reduce((s, p) => s + concurrency[p.phase], 0);
  const apiRps = i.phases.filter((p) => p.viaApi).reduce((s, p) => s + phaseInvocations(i, p, rate), 0);
  const connectionsPerNode =
    (environments + i.otherReservedConcurrency) * i.connectionsPerEnvironment + i.toolsConnections;
  const cost = costOf(i, rate, t, nodes, need.gbps);
  const cleanup = i.phases.find((p) => p.scheduled);
  const largestBody = Math.max(
    0,
    ...i.phases.filter((p) => !p.scheduled).map((p) => p.txsPerInvocation * p.requestBytesPerTx),
  );
  const limit = (name: string, n: number, l: number, shape = false): Limit => ({
    name,
    need: n,
    limit: l,
    use: n / l,
    shape,
  });
  const limits: Limit[] = [
    limit(
      'Lambda concurrency quota',
      environments + i.otherReservedConcurrency,
      i.lambdaAccountConcurrency - i.lambdaUnreserved,
    ),
    limit('connections per node', connectionsPerNode, Math.floor(i.protoFdMax * i.connectionBudgetShare)),
    limit('API Gateway account quota (rps)', apiRps, i.apiGatewayAccountRps),
    limit('API stage throttle (rps)', apiRps, i.apiStageRps),
    limit('Lambda 6 MB request (bytes)', largestBody, i.lambdaRequestLimitBytes),
    limit('cleanup shards', cleanup ? Math.ceil(concurrency[cleanup.phase]) : 0, i.cleanupMaxShards),
    // what the cluster's shape decides: another instance type changes them
    limit('file descriptors per function environment', 2 * nodes, i.lambdaFileDescriptors, true),
    limit('network per node (Gbps)', need.gbps / nodes, t.baselineGbps, true),
    limit('partitions', nodes, i.partitions, true),
  ];
  if (edition === 'community') {
    limits.push(limit('CE nodes', nodes, i.communityMaxNodes, true));
    limits.push(
      limit(
        'CE device per node (bytes)',
        need.deviceBytes / nodes / i.nodeDeviceTarget,
        i.communityMaxDeviceBytesPerNode,
        true,
      ),
    );
  }
  limits.sort((a, b) => b.use - a.use);
  return {
    rate,
    edition,
    instance: t,
    nodes,
    nodesBy,
    binds,
    ...need,
    perNodeGbps: need.gbps / nodes,
    concurrency,
    totalConcurrency,
    apiRps,
    connectionsPerNode,
    cost,
    limits,
    fits: limits.every((l) => l.use <= 1),
  };
}

/**
 * Enterprise Edition's primary index on flash (index-type flash): the 64 B a record copy moves from RAM to the
 * devices. What the index on flash still takes of RAM (its page cache) is left out.
 */
export function withIndexOnFlash(i: CapacityInputs): CapacityInputs {
  return { ...i, recordRamBytes: 0, recordDeviceBytes: i.recordDeviceBytes + i.recordRamBytes };
}

/** The price of a rate on a cluster of `nodes` of type t, USD per hour. */
export function costOf(i: CapacityInputs, rate: number, t: InstanceType, nodes: number, gbps: number): Cost {
  const pr = i.prices;
  let gbSecondsPerSecond = 0;
  let invocations = 0;
  let apiRequests = 0;
  for (const p of i.phases) {
    gbSecondsPerSecond += phaseConcurrency(i, p, rate) * (p.memoryMb / 1024);
    const n = phaseInvocations(i, p, rate);
    invocations += n;
    if (p.viaApi) apiRequests += n;
  }
  const hour = 3600;
  const crossAzGbPerSecond = (gbps / 8) * i.crossAzShare;
  const c = {
    ec2: nodes * t.usdPerHour,
    lambdaDuration: gbSecondsPerSecond * pr.lambdaGbSecond * hour,
    lambdaRequests: invocations * pr.lambdaRequest * hour,
    apiGateway: apiRequests * pr.apiGatewayRequest * hour,
    crossAz: crossAzGbPerSecond * 2 * pr.crossAzPerGbEachWay * hour,
    // block txs are neither external (no S3 object) nor paginated (no signal): none is sent (docs/signals.md)
    sqsS3: 0,
  };
  const total = c.ec2 + c.lambdaDuration + c.lambdaRequests + c.apiGateway + c.crossAz + c.sqsS3;
  return { ...c, total, perMillionTxs: total / ((rate * hour) / 1e6) };
}

/**
 * The cheapest deployment for a rate: each instance type at the nodes its binding resource needs, the cheapest of
 * those whose shape fits (Community Edition's nodes and device, a function environment's file descriptors, the
 * partitions, the network); when none does, the one whose worst such limit is least exceeded.
 */
export function plan(i: CapacityInputs, rate: number, edition: Edition): Deployment {
  if (!(rate > 0)) throw new RangeError(`rate: expected a positive number of txs a second, got ${rate}`);
  if (i.instanceTypes.length === 0) throw new RangeError('instanceTypes: none to choose from');
  const all = i.instanceTypes.map((t) => deploymentOn(i, rate, t, edition));
  const cheaper = (a: Deployment, b: Deployment) =>
    b.cost.ec2 < a.cost.ec2 || (b.cost.ec2 === a.cost.ec2 && b.nodes < a.nodes) ? b : a;
  const worst = (d: Deployment) => Math.max(...d.limits.filter((l) => l.shape).map((l) => l.use));
  const fitting = all.filter((d) => worst(d) <= 1);
  if (fitting.length) return fitting.reduce(cheaper);
  return all.reduce((a, b) => (worst(b) < worst(a) || (worst(b) === worst(a) && cheaper(a, b) === b) ? b : a));
}
