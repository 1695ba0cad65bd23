/**
 * Name limits of the Aerospike server and client the store runs on, checked at start-up (UTXO_STORE, the CDK's
 * aerospike.namespace / aerospike.set) so that a name the engine cannot serve is refused before anything is written.
 *
 * - Aerospike server 8.1 (as/include/base/datamodel.h): AS_ID_NAMESPACE_SZ 32 and AS_SET_NAME_MAX_SIZE 64, both
 *   counting the terminating NUL: a namespace has at most 31 characters, a set at most 63.
 * - Secondary index names (as/include/sindex/sindex_manager.h INAME_MAX_SZ 64): at most 63 characters. The store's
 *   index names are built to fit whatever the set (lib/engine/aerospike/schema.ts indexName).
 * - The node client (aerospike 6.x, src/main/commands/info_foreach.cc INFO_REQUEST_LEN 50): an infoAll request
 *   longer than 49 characters is refused ("Info request exceeds max. length"), one of exactly 50 is cut to 49
 *   silently. The client's IndexJob.wait polls `sindex/<ns>/<index>` with infoAll: for a 38-character index name in
 *   namespace `test` the request is 50 characters, cut, and names no index, so the wait never ends. The engine does
 *   not use that wait (schema.ts asks each node with infoNode, whose limit is 256).
 */
export const MAX_NAMESPACE_LENGTH = 31;
export const MAX_SET_NAME_LENGTH = 63;
export const MAX_INDEX_NAME_LENGTH = 63;
/** The node client's infoAll request limit (characters; one more is refused, exactly 50 is cut). */
export const MAX_INFO_ALL_REQUEST_LENGTH = 49;
/** Characters a set or namespace name may hold (the store's own rule: safe in info commands and index names). */
export const NAME_CHARACTERS = /^[A-Za-z0-9_-]+$/;

/** Why `set` cannot name the store's set, or undefined when it can. */
export function setNameProblem(set: string): string | undefined {
  if (set.length === 0) return 'the set name is empty';
  if (!NAME_CHARACTERS.test(set)) return `invalid set name "${set}" (letters, digits, "_" and "-" only)`;
  if (set.length > MAX_SET_NAME_LENGTH) {
    return `the set name "${set}" has ${set.length} characters; Aerospike allows at most ${MAX_SET_NAME_LENGTH}`;
  }
  return undefined;
}

/** Why `namespace` cannot name the store's namespace, or undefined when it can. */
export function namespaceProblem(namespace: string): string | undefined {
  if (namespace.length === 0) return 'the namespace is empty';
  if (!NAME_CHARACTERS.test(namespace)) {
    return `invalid namespace "${namespace}" (letters, digits, "_" and "-" only)`;
  }
  if (namespace.length > MAX_NAMESPACE_LENGTH) {
    return `the namespace "${namespace}" has ${namespace.length} characters; Aerospike allows at most ${MAX_NAMESPACE_LENGTH}`;
  }
  return undefined;
}

/**
 * Nodes a Community Edition cluster may have: the server's AS_CLUSTER_SZ (as/include/fabric/hb.h, 8 unless the
 * build defines it; min-cluster-size is bounded by it in as/src/base/cfg.c). AEROSPIKE_CLUSTER_SIZE (the CDK's
 * nodeCount) cannot be larger; the server itself refuses `cluster-stable:size=` values of 4 digits or more.
 */
export const CE_MAX_CLUSTER_SIZE = 8;

/**
 * The fewest commands the node client's command queue runs at once: the C client refuses a
 * max_commands_in_process of 1 to 4 when the first client connects (src/main/aerospike/as_event.c
 * as_event_validate_policy, "max_commands_in_process %u must be 0 or >= 5"), and the store keeps it at most the
 * connections per node, so both AEROSPIKE_MAX_COMMANDS_IN_PROCESS and AEROSPIKE_MAX_CONNS_PER_NODE start at 5.
 */
export const MIN_COMMANDS_IN_PROCESS = 5;

/**
 * The smallest AEROSPIKE_COMMAND_TIMEOUT_MS / AEROSPIKE_BATCH_TIMEOUT_MS, ms. Measured 2026-11-26 (two CE 8.1.2 nodes
 * on loopback, a shared 2-core machine at load average 15 to 36, each value an `npm start` of its own serving every
 * route family; served/tried, command and batch budget together): 1 to 2 ms 0/7 (start-up or the first request times
 * out, status 9), 5 to 20 ms 4/18, 50 ms 6/9, 100 ms 8/9, 200 ms 6/6, 250 ms 8/8. Below 200 ms a single lost packet
 * fails the command anyway (Linux retransmits after 200 ms at the earliest), so the floor is above that.
 */
export const MIN_AEROSPIKE_TIMEOUT_MS = 250;
