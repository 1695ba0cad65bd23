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
