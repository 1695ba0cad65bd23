/**
 * What a measured CPU time costs at list prices: the scale block's cost per million txs (bench/sections/scale/block.ts).
 *
 * Prices in USD, region us-east-1, as listed on 2026-11-26: Lambda x86_64 duration $0.0000166667 per GB-second (the
 * first 6 billion GB-seconds a month) and $0.20 per million requests (aws.amazon.com/lambda/pricing); API Gateway
 * REST APIs $3.50 per million calls (the first 333 million a month; aws.amazon.com/api-gateway/pricing). Free tiers
 * are left out.
 *
 * Lambda gives a function CPU in proportion to its memory, one vCPU at 1,769 MB (the Lambda developer guide,
 * "Configure Lambda function memory"); below that a second of CPU takes 1769 / memory seconds of billed duration.
 * So the duration here is the floor of a CPU-bound function: CPU time / min(1, memory / 1769). Time a function waits
 * for Aerospike without using the CPU is billed too and is not in it.
 */
export const PRICES = {
  region: 'us-east-1',
  listed: '2026-11-26',
  lambdaGbSecondX86: 0.0000166667,
  lambdaRequest: 0.2 / 1e6,
  apiGatewayRestRequest: 3.5 / 1e6,
} as const;

/** Lambda's memory size with one full vCPU. */
export const MB_PER_VCPU = 1769;

export interface CostInput {
  /** the function process's CPU (user + system) per tx, microseconds */
  cpuUsPerTx: number;
  /** the function's configured memory (cdk/config/functions.ts) */
  memoryMb: number;
  /** invocations per tx: 1 / the txs a request carries */
  requestsPerTx: number;
  /** invoked through API Gateway (false: a scheduled invocation, e.g. cleanup) */
  viaApi: boolean;
}

export interface Cost {
  /** billed duration per tx, seconds (the CPU-bound floor) */
  durationSecondsPerTx: number;
  /** USD per million txs */
  lambdaDuration: number;
  lambdaRequests: number;
  apiGateway: number;
  total: number;
}

export function costPerMillionTxs(c: CostInput): Cost {
  if (!(c.memoryMb > 0)) throw new RangeError(`memoryMb: expected a positive number, got ${c.memoryMb}`);
  const durationSecondsPerTx = c.cpuUsPerTx / 1e6 / Math.min(1, c.memoryMb / MB_PER_VCPU);
  const lambdaDuration = durationSecondsPerTx * (c.memoryMb / 1024) * PRICES.lambdaGbSecondX86 * 1e6;
  const lambdaRequests = c.requestsPerTx * PRICES.lambdaRequest * 1e6;
  const apiGateway = c.viaApi ? c.requestsPerTx * PRICES.apiGatewayRestRequest * 1e6 : 0;
  return {
    durationSecondsPerTx,
    lambdaDuration,
    lambdaRequests,
    apiGateway,
    total: lambdaDuration + lambdaRequests + apiGateway,
  };
}
