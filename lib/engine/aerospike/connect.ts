/**
 * Connecting to Aerospike. connectAerospike opens one client (the native module is required here, lazily);
 * getSharedAerospikeClient keeps one client per process for Lambda: created on the first invocation, reused by the
 * following ones while the execution environment lives, and never closed by handlers.
 */
import type { Client, ConfigOptions, Host } from 'aerospike';
import { MIN_COMMANDS_IN_PROCESS } from '../../domain/engine-limits';
import { EngineError } from '../port';
import { mapAerospikeError } from './errors';
import { loadAerospike, type AerospikeModule } from './native';

export interface AerospikeTimeouts {
  /** socket connect timeout, ms (default 1000) */
  connectMs?: number;
  /** total timeout of single-record reads and writes and UDF applies, ms (default 1000) */
  commandMs?: number;
  /** total timeout of batch commands, ms (default 5000) */
  batchMs?: number;
  /** total timeout of one page of a range query, ms (default 30000) */
  queryMs?: number;
  /** info commands (UDF registration, index creation), ms (default 10000) */
  infoMs?: number;
}

export interface AerospikeConnectOptions {
  /** seed hosts "h1:3000,h2:3000" (port defaults to 3000) */
  hosts: string;
  namespace: string;
  user?: string;
  password?: string;
  timeouts?: AerospikeTimeouts;
  /**
   * Connection pool cap per node. A Lambda execution environment runs one invocation at a time, so a small pool
   * (default 32) is plenty, and it keeps many concurrent environments from exhausting the nodes' proto-fd-max.
   */
  maxConnsPerNode?: number;
  /** the process-wide command queue (setupCommandQueue); defaults from commandQueuePolicy */
  commandQueue?: Partial<CommandQueueOptions>;
  /**
   * The namespace is in strong-consistency mode (Enterprise): reads are linearizable (readModeSC LINEARIZE). A
   * Community server refuses LINEARIZE reads (status 25, ENTERPRISE_ONLY), so it is set only then.
   */
  strongConsistency?: boolean;
}

export const DEFAULT_MAX_CONNS_PER_NODE = 32;

/** The client's policy enums (aerospike.d.ts policy.replica, readModeAP, readModeSC, commitLevel), by value. */
export const REPLICA_MASTER = 0;
export const READ_MODE_AP_ALL = 1;
export const READ_MODE_SC_LINEARIZE = 1;
export const COMMIT_ALL = 0;
export const DEFAULT_MAX_COMMANDS_IN_QUEUE = 4096;

/**
 * The client's global command queue. Without it, a command that finds every connection to its node busy fails at
 * once ("Max node/event loop ... async connections would be exceeded", status -7). With it, at most
 * `maxCommandsInProcess` commands run at a time (each holds one connection, so keeping it <= maxConnsPerNode means
 * no node's pool is ever exhausted) and the rest wait in a queue of at most `maxCommandsInQueue`; a command beyond
 * that fails with ERR_ASYNC_QUEUE_FULL (-11), which is UNAVAILABLE (a retryable 503). Single-record commands, batch
 * reads and writes, and query pages (Query#results runs foreach) go through it; info commands do not.
 */
export interface CommandQueueOptions {
  maxCommandsInProcess: number;
  maxCommandsInQueue: number;
}

function invalid(message: string): EngineError {
  return new EngineError('INVALID', message);
}

/** "h1:3000,h2" -> [{addr: 'h1', port: 3000}, {addr: 'h2', port: 3000}] (IPv6 as "[::1]:3000"). */
export function parseHosts(hosts: string): Host[] {
  if (typeof hosts !== 'string' || hosts.trim() === '') throw invalid('aerospike hosts: empty host list');
  return hosts.split(',').map((entry) => {
    const item = entry.trim();
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]+)(?::(\d+))?$/.exec(item);
    if (!m) throw invalid(`aerospike hosts: bad host "${item}" (expected host or host:port)`);
    const port = m[2] === undefined ? 3000 : Number(m[2]);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw invalid(`aerospike hosts: bad port in "${item}"`);
    }
    return { addr: m[1].replace(/^\[|\]$/g, ''), port };
  });
}

/** The client configuration for the options (exported for tests; no native module needed). */
export function aerospikeConfig(options: AerospikeConnectOptions): ConfigOptions {
  if (!options.namespace) throw invalid('aerospike: namespace is required');
  if ((options.user === undefined) !== (options.password === undefined)) {
    throw invalid('aerospike: user and password must be given together');
  }
  const t = options.timeouts ?? {};
  // Reads are retried; writes, removes and UDF applies are not (maxRetries 0, the C client's own default for
  // them): a retry after a connection lost once the command was sent re-runs it, and its answer (RECORD_EXISTS for
  // a create, GENERATION_MISMATCH, a UDF's no-op answer without the first run's signal) hides what happened.
  // Consistency (docs/decisions/0006-partitions-on-community-edition.md), pinned rather than left to the client's
  // defaults: every command goes to the partition's master; reads consult every duplicate while migrations run
  // (readModeAP ALL: after a split heals, a read sees the version the merge will keep, not one node's copy), and on
  // a strong-consistency namespace (Enterprise) reads are linearizable; writes answer only once every replica of the
  // master's cluster applied them (commitLevel ALL).
  const reads = {
    replica: REPLICA_MASTER,
    readModeAP: READ_MODE_AP_ALL,
    ...(options.strongConsistency ? { readModeSC: READ_MODE_SC_LINEARIZE } : {}),
  };
  const writes = { replica: REPLICA_MASTER, commitLevel: COMMIT_ALL };
  const command = { totalTimeout: t.commandMs ?? 1000, socketTimeout: t.commandMs ?? 1000, maxRetries: 2, ...reads };
  const commandWrite = { ...command, maxRetries: 0, ...writes };
  const batch = { totalTimeout: t.batchMs ?? 5000, socketTimeout: t.batchMs ?? 5000, maxRetries: 2, ...reads };
  const batchWrite = { ...batch, maxRetries: 0, ...writes };
  const policies = {
    read: command,
    write: commandWrite,
    remove: commandWrite,
    apply: commandWrite,
    operate: commandWrite,
    batch,
    batchParentWrite: batchWrite,
    query: { totalTimeout: t.queryMs ?? 30000, socketTimeout: t.queryMs ?? 30000 },
    info: { timeout: t.infoMs ?? 10000 },
  };
  const config: ConfigOptions = {
    hosts: parseHosts(options.hosts),
    connTimeoutMs: t.connectMs ?? 1000,
    maxConnsPerNode: options.maxConnsPerNode ?? DEFAULT_MAX_CONNS_PER_NODE,
    minConnsPerNode: 0,
    policies: policies as unknown as ConfigOptions['policies'],
  };
  if (options.user !== undefined) {
    config.user = options.user;
    config.password = options.password;
  }
  return config;
}

/** The command queue for the options: in process defaults to (and may not exceed) the connections per node. */
export function commandQueuePolicy(options: AerospikeConnectOptions): CommandQueueOptions {
  const conns = options.maxConnsPerNode ?? DEFAULT_MAX_CONNS_PER_NODE;
  const inProcess = options.commandQueue?.maxCommandsInProcess ?? conns;
  const inQueue = options.commandQueue?.maxCommandsInQueue ?? DEFAULT_MAX_COMMANDS_IN_QUEUE;
  if (!Number.isInteger(inProcess) || inProcess < MIN_COMMANDS_IN_PROCESS || inProcess > conns) {
    throw invalid(
      `aerospike: maxCommandsInProcess must be an integer from ${MIN_COMMANDS_IN_PROCESS} (the client's minimum) ` +
        `to maxConnsPerNode (${conns}), got ${inProcess}`,
    );
  }
  if (!Number.isInteger(inQueue) || inQueue < 1) {
    throw invalid(`aerospike: maxCommandsInQueue must be a positive integer, got ${inQueue}`);
  }
  return { maxCommandsInProcess: inProcess, maxCommandsInQueue: inQueue };
}

let queueSetUp: CommandQueueOptions | undefined;

/**
 * Sets up the client's global command queue, once per process and before the first client exists (the client
 * refuses it later). Every client of the process shares it, so a second connection asking for other limits is
 * INVALID rather than silently running under the first one's.
 */
export function setupCommandQueue(
  Aerospike: Pick<AerospikeModule, 'setupGlobalCommandQueue'>,
  policy: CommandQueueOptions,
): void {
  if (queueSetUp) {
    if (
      queueSetUp.maxCommandsInProcess === policy.maxCommandsInProcess &&
      queueSetUp.maxCommandsInQueue === policy.maxCommandsInQueue
    )
      return;
    throw invalid(
      `aerospike: the command queue is process-wide and already set up with ${JSON.stringify(queueSetUp)}; ` +
        `another connection asked for ${JSON.stringify(policy)}`,
    );
  }
  try {
    Aerospike.setupGlobalCommandQueue(policy);
  } catch (err) {
    throw mapAerospikeError(err, 'setting up the command queue');
  }
  queueSetUp = { ...policy };
}

/** Connects one client and checks that the namespace exists. The caller owns the client (close() it). */
export async function connectAerospike(options: AerospikeConnectOptions): Promise<Client> {
  const config = aerospikeConfig(options);
  const queue = commandQueuePolicy(options);
  const Aerospike = loadAerospike();
  setupCommandQueue(Aerospike, queue);
  const client = await connectClient(Aerospike.client(config), options.hosts);
  try {
    const info = await client.infoAny('namespaces');
    const names = (info.split('\t')[1] ?? '').trim().split(';').filter(Boolean);
    if (!names.includes(options.namespace)) {
      throw invalid(
        `aerospike: namespace "${options.namespace}" does not exist on ${options.hosts} (has ${names.join(', ')})`,
      );
    }
  } catch (err) {
    closeQuietly(client);
    throw mapAerospikeError(err, 'connect');
  }
  return client;
}

/**
 * Closes a client whose connect or first check failed. The close itself may throw (the client refuses to close when
 * its event loop never started: "Event loop is not initialized right now"); that must not replace the error that
 * says why the connection failed, so it is dropped.
 */
function closeQuietly(client: Pick<Client, 'close'>): void {
  try {
    client.close();
  } catch {
    // the connect error is the one to report
  }
}

/** Connects `client` (closing it when that fails); a failure is an EngineError naming the hosts. */
export async function connectClient<C extends Pick<Client, 'connect' | 'close'>>(client: C, hosts: string): Promise<C> {
  try {
    await client.connect();
  } catch (err) {
    closeQuietly(client);
    const mapped = mapAerospikeError(err, `connect ${hosts}`);
    throw new EngineError(mapped.code === 'UNKNOWN' ? 'UNAVAILABLE' : mapped.code, mapped.message, { cause: err });
  }
  return client;
}

const shared = new Map<string, Promise<Client>>();

/**
 * One client per process and per (hosts, namespace, user): reused across Lambda invocations. A failed connection
 * is forgotten so that the next invocation tries again.
 */
export function getSharedAerospikeClient(options: AerospikeConnectOptions): Promise<Client> {
  const id = JSON.stringify([options.hosts, options.namespace, options.user ?? null]);
  let client = shared.get(id);
  if (!client) {
    client = connectAerospike(options);
    shared.set(id, client);
    client.catch(() => {
      if (shared.get(id) === client) shared.delete(id);
    });
  }
  return client;
}

/**
 * Closes every shared client and forgets it: for a script that is done with the cluster (a function's process never
 * calls it). An open client keeps its connections, and with them the process, alive.
 */
export async function closeSharedAerospikeClients(): Promise<void> {
  const clients = [...shared.values()];
  shared.clear();
  for (const client of clients) {
    try {
      (await client).close();
    } catch {
      // a connection that failed has nothing to close
    }
  }
}
