/**
 * The capacity model's inputs (bench/capacity/model.ts): each measured figure names the run it came from (RUNS:
 * command, machine, date), each price and instance figure its source, each assumption why. The deployment's own
 * settings are read from its configuration (cdk/config), so the table follows them.
 */
import {
  aerospikeDefaults,
  apiDefaults,
  BUDGET_SHARE,
  CE_MAX_DATA_BYTES_PER_NODE,
  CE_MAX_NODES,
  DEPLOYED_CLEANUP_PARTITION_RANGES,
  functionDefaults,
  storeDefaults,
  TOOLS_CONNECTIONS,
  type FunctionName,
} from '../../cdk/config';
import { MB_PER_VCPU, PRICES } from '../sections/scale/cost';
import type { CapacityInputs, InstanceType, Phase, PhaseInput } from './model';

/** Teranode's published yardstick: 1,000,000 block txs a second, and two decades below it. */
export const TARGET_RATES = [10_000, 100_000, 1_000_000] as const;

/** The runs the measured figures come from. */
export const RUNS = {
  block:
    "the scale bench's 100k block on 2 nodes RF 2, three runs (three block rounds and three replay rounds each): " +
    '`sudo ASD_BIN=<asd> npx tsx bench/capacity/slope.ts --nodes 2 --exec "BENCH_ONLY=scale BENCH_SCALE_PARTS=block ' +
    'SPEND_ACK_GUARD=refuse NODE_OPTIONS=--max-semi-space-size=51 npm run bench"`; AMD EPYC, 2 cores, the machine ' +
    'to the runs, Node 20.20.2, asd CE 8.1.2 in network namespaces, data on a file; 2026-11-29, the code of 49443f0',
  slope:
    'the slope check on 3 nodes, one client, twice at each RF: `sudo ASD_BIN=<asd> npx tsx bench/capacity/slope.ts ' +
    '--nodes 3 --clients 1 --rf 2 --txs 30000` and `--rf 3`; same machine, day and code, 22:01-22:04 UTC',
} as const;

/**
 * Each phase as measured, per block tx. functionCpuUs: RUNS.block, the median of the local server's process CPU (the
 * handlers, the store, the engine and the native client: what the functions' processes do). asdCpuUs: RUNS.slope at
 * RF 3 (the deployment's default), every asd's CPU less its idle share, the mean of two runs (the slope's workload is
 * the block's on the server side). asdReplicaCpuUs: RUNS.slope, RF 3 less RF 2 (means of two runs).
 */
const MEASURED: Record<Phase, { functionCpuUs: number; asdCpuUs: number; asdReplicaCpuUs: number }> = {
  create: { functionCpuUs: 96, asdCpuUs: 155, asdReplicaCpuUs: 155 - 116 },
  spend: { functionCpuUs: 40, asdCpuUs: 152, asdReplicaCpuUs: 152 - 122 },
  setMined: { functionCpuUs: 42, asdCpuUs: 199, asdReplicaCpuUs: 199 - 173 },
  cleanup: { functionCpuUs: 72, asdCpuUs: 205, asdReplicaCpuUs: 205 - 158 },
};
/** the replication factor of MEASURED's asd figures and of the wire bytes */
const MEASURED_RF = 3;

/**
 * Device bytes per record copy of a block tx: RUNS.slope, data_used_bytes over the record copies after setMined (the
 * block's spent and mined parents, its mined txs: 700 B at RF 2 and at RF 3), plus what a real P2PKH tx stores beyond
 * the bench's (its scripts are a 1-byte OP_TRUE lock and an empty unlock): per input 107 B of unlocking script and
 * 24 B more of the previous locking script (extended format), per output 24 B; the block's txs average 2 inputs and
 * 2 outputs.
 */
const MEASURED_RECORD_BYTES = 700;
const P2PKH_EXTRA_BYTES = 2 * (107 + 24) + 2 * 24;
/** bytes in + out of every node's interface per block tx, all phases: RUNS.slope, RF 3, the mean of two runs */
const MEASURED_WIRE_BYTES = 4684 + 2298 + 3618 + 3338;
/** what a third copy adds to it: RUNS.slope, RF 3 less RF 2 (3029 + 1308 + 2001 + 2132) */
const MEASURED_WIRE_REPLICA_BYTES = MEASURED_WIRE_BYTES - (3029 + 1308 + 2001 + 2132);

/**
 * Bytes crossing an AZ per byte on the nodes' wires (3 AZs, a node in each in turn): the two replica copies at RF 3
 * (each about MEASURED_WIRE_REPLICA_BYTES, counted out of one node and into another: half of it is the transfer) all
 * cross; the rest, between the functions and the nodes (counted once), crosses 2 times in 3.
 */
const REPLICA_WIRE = 2 * MEASURED_WIRE_REPLICA_BYTES;
const CROSS_AZ_SHARE = (REPLICA_WIRE / 2 + ((MEASURED_WIRE_BYTES - REPLICA_WIRE) * 2) / 3) / MEASURED_WIRE_BYTES;

/**
 * Instance types (x86_64 NVMe instance store, the families cdk/config/aerospike.ts accepts): vCPUs and memory from
 * the EC2 instance types guide; instance store and baseline network bandwidth (the sustained figure, not the "up to"
 * burst) from its storage optimized tables (docs.aws.amazon.com/ec2/latest/instancetypes/so.html, "Instance store
 * specifications" and "Network specifications"); on-demand Linux prices in us-east-1 from the AWS Price List as
 * captured on 2026-07-20 in aws/karpenter-provider-aws (pkg/providers/pricing/zz_generated.pricing_aws.go; its
 * zz_generated.bandwidth.go holds the same baseline figures, taken from so.html).
 */
const type = (
  name: string,
  vcpus: number,
  memoryGiB: number,
  instanceStoreGB: number,
  baselineGbps: number,
  usdPerHour: number,
): InstanceType => ({
  name,
  vcpus,
  memoryGiB,
  instanceStoreGB,
  baselineGbps,
  usdPerHour,
});
export const INSTANCE_TYPES: InstanceType[] = [
  type('i4i.large', 2, 16, 468, 0.781, 0.172),
  type('i4i.xlarge', 4, 32, 937, 1.875, 0.343),
  type('i4i.2xlarge', 8, 64, 1875, 4.687, 0.686),
  type('i4i.4xlarge', 16, 128, 3750, 9.375, 1.373),
  type('i4i.8xlarge', 32, 256, 7500, 18.75, 2.746),
  type('i4i.16xlarge', 64, 512, 15000, 37.5, 5.491),
  type('i4i.32xlarge', 128, 1024, 30000, 75, 10.9824),
  type('i7ie.large', 2, 16, 1250, 2.083, 0.2599),
  type('i7ie.xlarge', 4, 32, 2500, 4.166, 0.5198),
  type('i7ie.2xlarge', 8, 64, 5000, 8.333, 1.0396),
  type('i7ie.3xlarge', 12, 96, 7500, 12.5, 1.5594),
  type('i7ie.6xlarge', 24, 192, 15000, 12.5, 3.1188),
  type('i7ie.12xlarge', 48, 384, 30000, 25, 6.2376),
  type('i7ie.24xlarge', 96, 768, 60000, 50, 12.4752),
  type('i7ie.48xlarge', 192, 1536, 120000, 100, 24.9504),
];

/** The phase each function runs, how it is invoked, and what a request carries. */
const PHASE_SHAPE: Record<
  Phase,
  { fn: FunctionName; txsPerInvocation: number; scheduled: boolean; viaApi: boolean; requestBytesPerTx: number }
> = {
  // the block client's requests: 1,000 txs a create or spend (EF hex in JSON: a 442-byte P2PKH tx of 2 inputs and
  // 2 outputs is 884 characters and its quotes), 10,000 txids a setMined (64 hex characters and quotes each)
  create: { fn: 'create', txsPerInvocation: 1000, scheduled: false, viaApi: true, requestBytesPerTx: 900 },
  spend: { fn: 'spend', txsPerInvocation: 1000, scheduled: false, viaApi: true, requestBytesPerTx: 900 },
  setMined: { fn: 'setMined', txsPerInvocation: 10000, scheduled: false, viaApi: true, requestBytesPerTx: 67 },
  // scheduled (EventBridge, one invocation per shard a minute), no API Gateway request
  cleanup: { fn: 'cleanup', txsPerInvocation: 1, scheduled: true, viaApi: false, requestBytesPerTx: 0 },
};

export function capacityInputs(): CapacityInputs {
  const aerospike = aerospikeDefaults('prod');
  const functions = functionDefaults();
  const store = storeDefaults();
  const sized = new Set(Object.values(PHASE_SHAPE).map((s) => s.fn));
  const phases: PhaseInput[] = (Object.keys(PHASE_SHAPE) as Phase[]).map((phase) => {
    const { fn, ...shape } = PHASE_SHAPE[phase];
    return { phase, ...MEASURED[phase], ...shape, memoryMb: functions[fn].memoryMb };
  });
  return {
    phases,
    measuredRf: MEASURED_RF,
    rf: aerospike.replicationFactor,
    recordDeviceBytes: MEASURED_RECORD_BYTES + P2PKH_EXTRA_BYTES,
    // Community Edition keeps the primary index in RAM, 64 B a record copy (docs/records.md); the secondary indexes
    // (deleteAtHeight on every retained record) are left out: their arenas are allocated up front (performance-scale.md)
    recordRamBytes: 64,
    recordsPerTx: 1,
    // a record lives until spent and mined (the next block, 600 s), then BLOCK_HEIGHT_RETENTION blocks of 600 s, then
    // the next cleanup pass (a minute): the UTXO set of txs never spent is not in it (the bench spends every output)
    retentionSeconds: 600 + store.blockHeightRetention * 600 + 60,
    wireBytesPerTx: MEASURED_WIRE_BYTES,
    wireReplicaBytesPerTx: MEASURED_WIRE_REPLICA_BYTES,
    crossAzShare: CROSS_AZ_SHARE,
    connectionsPerEnvironment: aerospike.clientMaxConnsPerNode + 1,
    protoFdMax: aerospike.protoFdMax,
    connectionBudgetShare: BUDGET_SHARE,
    toolsConnections: TOOLS_CONNECTIONS,
    otherReservedConcurrency: (Object.keys(functions) as FunctionName[])
      .filter((f) => !sized.has(f))
      .reduce((s, f) => s + (functions[f].reservedConcurrency ?? 0), 0),
    // half of a node's vCPUs: a node lost moves its share onto the rest, with migrations on top
    nodeCpuTarget: 0.5,
    // the indexes in at most 60 % of a node's RAM (the OS, asd's own and the migration buffers take the rest)
    nodeMemoryTarget: 0.6,
    // the device alarm's 70 % (deviceUsedAlarmPercent; stop-writes at 80)
    nodeDeviceTarget: aerospike.deviceUsedAlarmPercent / 100,
    nodeNetworkTarget: 0.5,
    // not measured: a function waits on Aerospike for part of its billed time; half is assumed (1 is the floor
    // bench/sections/scale/cost.ts prices)
    functionCpuShare: 0.5,
    // Lambda: one vCPU at 1,769 MB (developer guide, "Configure Lambda function memory"); the regional concurrency
    // quota 1,000 by default, 100 of it unreserved; API Gateway: 10,000 requests a second per account and region
    // (the default throttle quota, API Gateway quotas); 6 MB synchronous request payload (Lambda quotas);
    lambdaMbPerVcpu: MB_PER_VCPU,
    lambdaAccountConcurrency: 1000,
    lambdaUnreserved: 100,
    apiGatewayAccountRps: 10000,
    apiStageRps: apiDefaults().apiThrottleRateLimit,
    lambdaRequestLimitBytes: 6 * 1024 * 1024,
    // Lambda quotas: 1,024 file descriptors an execution environment
    lambdaFileDescriptors: 1024,
    cleanupMaxShards: DEPLOYED_CLEANUP_PARTITION_RANGES,
    scheduleSeconds: 60,
    partitions: 4096,
    communityMaxNodes: CE_MAX_NODES,
    communityMaxDeviceBytesPerNode: CE_MAX_DATA_BYTES_PER_NODE,
    instanceTypes: INSTANCE_TYPES,
    prices: {
      source:
        'us-east-1 list prices: Lambda x86 $0.0000166667 per GB-second and $0.20 per million requests ' +
        '(aws.amazon.com/lambda/pricing), API Gateway REST $3.50 per million (aws.amazon.com/api-gateway/pricing), ' +
        `as bench/sections/scale/cost.ts (listed ${PRICES.listed}); data across AZs $0.01 per GB each way ` +
        '(aws.amazon.com/ec2/pricing/on-demand, "Data Transfer within the same AWS Region"); SQS $0.40 per million, ' +
        'S3 PUT $0.005 per 1,000 (not used by block txs); EC2 as INSTANCE_TYPES',
      lambdaGbSecond: PRICES.lambdaGbSecondX86,
      lambdaRequest: PRICES.lambdaRequest,
      apiGatewayRequest: PRICES.apiGatewayRestRequest,
      crossAzPerGbEachWay: 0.01,
      sqsRequest: 0.4e-6,
      s3Request: 5e-6,
    },
  };
}

export const CAPACITY_INPUTS: CapacityInputs = capacityInputs();
