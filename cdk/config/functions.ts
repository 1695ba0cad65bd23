/** Configuration area: the Lambda functions' tuning and the connection budget it must fit in. */
import { ConfigurationError, int, isObject } from './errors';

export const FUNCTION_NAMES = [
  'create',
  'get',
  'spend',
  'unspend',
  'setMined',
  'getUtxo',
  'status',
  'admin',
  'signals',
  'cleanup',
] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

export interface FunctionTuning {
  /** MiB */
  memoryMb: number;
  timeoutSeconds: number;
  /** reserved concurrency (unset: none) */
  reservedConcurrency?: number;
  /** provisioned concurrency on the `live` alias (unset: no alias, no provisioned concurrency) */
  provisionedConcurrency?: number;
}

const API_TUNING = (reservedConcurrency: number): FunctionTuning => ({
  memoryMb: 1024,
  timeoutSeconds: 29,
  reservedConcurrency,
});

// Reserved concurrency caps each function's execution environments, each holding up to clientMaxConnsPerNode
// connections to every node: connectionBudget() checks the sum against proto-fd-max at synth.
export function functionDefaults(): Record<FunctionName, FunctionTuning> {
  return {
    create: API_TUNING(60),
    get: API_TUNING(40),
    spend: API_TUNING(100),
    unspend: API_TUNING(20),
    setMined: API_TUNING(40),
    getUtxo: API_TUNING(40),
    // the validators' cheap reads (GET /v1/health, GET /v1/chain/tip), apart from block validation's admin writes
    status: API_TUNING(10),
    admin: API_TUNING(10),
    signals: { memoryMb: 1024, timeoutSeconds: 60, reservedConcurrency: 10 },
    cleanup: { memoryMb: 1024, timeoutSeconds: 55, reservedConcurrency: 2 },
  };
}

/** Per-function context keys: `-c reservedConcurrency=cleanup:1,spend:50` and the like. */
export const FUNCTION_CONTEXT_KEYS = {
  memoryMb: 'functionMemoryMb',
  timeoutSeconds: 'functionTimeoutSeconds',
  reservedConcurrency: 'reservedConcurrency',
  provisionedConcurrency: 'provisionedConcurrency',
} as const;

/** Keys of a function's tuning that may be absent from its defaults. */
export const FUNCTION_OPTIONAL_KEYS = ['reservedConcurrency', 'provisionedConcurrency'] as const;

/** `cleanup:1,spend:50` or an object {cleanup: 1} -> {cleanup: 1, spend: 50} */
export function perFunction(key: string, raw: unknown): Partial<Record<FunctionName, number>> {
  const entries: [string, unknown][] = isObject(raw)
    ? Object.entries(raw)
    : String(raw)
        .split(',')
        .filter((s) => s.trim() !== '')
        .map((pair) => {
          const [name, value] = pair.split(':').map((s) => s.trim());
          return [name, value];
        });
  const out: Partial<Record<FunctionName, number>> = {};
  for (const [name, value] of entries) {
    if (!(FUNCTION_NAMES as readonly string[]).includes(name))
      throw new ConfigurationError(key, `unknown function "${name}" (one of ${FUNCTION_NAMES.join(', ')})`);
    const n = Number(value);
    if (!Number.isInteger(n)) throw new ConfigurationError(key, `expected ${name}:<integer>, got "${String(value)}"`);
    out[name as FunctionName] = n;
  }
  return out;
}

export function validateFunctions(functions: Record<FunctionName, FunctionTuning>): void {
  for (const name of FUNCTION_NAMES) {
    const f = functions[name];
    int(`functions.${name}.memoryMb`, f.memoryMb, 128, 10240);
    int(`functions.${name}.timeoutSeconds`, f.timeoutSeconds, 1, name === 'signals' || name === 'cleanup' ? 900 : 29);
    if (f.reservedConcurrency !== undefined) int(`reservedConcurrency.${name}`, f.reservedConcurrency, 0, 10000);
    if (f.provisionedConcurrency !== undefined)
      int(`provisionedConcurrency.${name}`, f.provisionedConcurrency, 1, 10000);
  }
}

/** Connections kept free on every node for the operators' tools: asbackup/asrestore, asadm, the exporter. */
export const TOOLS_CONNECTIONS = 256;
/** The budget may use at most this share of proto-fd-max; the connections alarm fires at CONNECTIONS_ALARM_SHARE. */
export const BUDGET_SHARE = 0.8;
export const CONNECTIONS_ALARM_SHARE = 0.9;

export interface ConnectionBudget {
  /** per function: reserved concurrency (its execution environments at most) x (conns per node + 1 tend connection) */
  perFunction: Record<FunctionName, number>;
  /** connections one node may see: the sum + TOOLS_CONNECTIONS */
  total: number;
  limit: number;
}

/** What the budget reads: the functions' tuning and the nodes' connection settings. */
interface BudgetInput {
  functions: Record<FunctionName, FunctionTuning>;
  aerospike: { clientMaxConnsPerNode: number; protoFdMax: number };
}

/**
 * The connection budget of one node: every execution environment of every function opens up to
 * AEROSPIKE_MAX_CONNS_PER_NODE command connections plus one tend connection to every node (the client's pool is per
 * node), and reserved concurrency is the most environments a function has (provisioned ones included). The sum plus
 * TOOLS_CONNECTIONS must stay under BUDGET_SHARE x proto-fd-max; a node refuses connections beyond proto-fd-max
 * (aerospike.com/docs/database/reference/config#service__proto-fd-max). Refused at synth otherwise, and every
 * function must have a reserved concurrency (unbounded environments have no budget).
 */
export function connectionBudget(c: BudgetInput): ConnectionBudget {
  const perEnv = c.aerospike.clientMaxConnsPerNode + 1;
  const perFunction = {} as Record<FunctionName, number>;
  let total = TOOLS_CONNECTIONS;
  for (const name of FUNCTION_NAMES) {
    const reserved = c.functions[name].reservedConcurrency;
    if (reserved === undefined || reserved === 0)
      throw new ConfigurationError(
        `reservedConcurrency.${name}`,
        'every function needs a reserved concurrency (>= 1): it bounds its Aerospike connections',
      );
    const provisioned = c.functions[name].provisionedConcurrency;
    if (provisioned !== undefined && provisioned > reserved)
      throw new ConfigurationError(
        `provisionedConcurrency.${name}`,
        `${provisioned} is above the reserved concurrency ${reserved}`,
      );
    perFunction[name] = reserved * perEnv;
    total += perFunction[name];
  }
  const limit = Math.floor(c.aerospike.protoFdMax * BUDGET_SHARE);
  if (total > limit) {
    const detail = FUNCTION_NAMES.map((n) => `${n} ${c.functions[n].reservedConcurrency}`).join(', ');
    throw new ConfigurationError(
      'reservedConcurrency',
      `the functions may open ${total} connections to one node (reserved concurrency ${detail}; x ` +
        `${perEnv} per environment; + ${TOOLS_CONNECTIONS} for tools), over ${BUDGET_SHARE * 100}% of ` +
        `proto-fd-max ${c.aerospike.protoFdMax} (${limit}): lower reservedConcurrency or clientMaxConnsPerNode, or ` +
        'raise protoFdMax',
    );
  }
  return { perFunction, total, limit };
}
