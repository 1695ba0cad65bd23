/**
 * Aerospike status codes -> EngineError codes. The numbers are the C client's as_status values (stable across
 * client versions; the node client exposes the same numbers as Aerospike.status.*), so mapping an error does not
 * need the native module.
 */
import { EngineError, type EngineErrorCode } from '../port';

export const AS_STATUS = {
  OK: 0,
  ERR_SERVER: 1,
  ERR_RECORD_NOT_FOUND: 2,
  ERR_RECORD_GENERATION: 3,
  ERR_REQUEST_INVALID: 4,
  ERR_RECORD_EXISTS: 5,
  ERR_BIN_EXISTS: 6,
  ERR_CLUSTER_CHANGE: 7,
  ERR_SERVER_FULL: 8,
  ERR_TIMEOUT: 9,
  ERR_ALWAYS_FORBIDDEN: 10,
  ERR_CLUSTER: 11,
  ERR_BIN_INCOMPATIBLE_TYPE: 12,
  ERR_RECORD_TOO_BIG: 13,
  ERR_RECORD_BUSY: 14,
  ERR_UNSUPPORTED_FEATURE: 16,
  ERR_DEVICE_OVERLOAD: 18,
  ERR_RECORD_KEY_MISMATCH: 19,
  ERR_NAMESPACE_NOT_FOUND: 20,
  ERR_BIN_NAME: 21,
  ERR_FAIL_FORBIDDEN: 22,
  ERR_ENTERPRISE_ONLY: 25,
  ERR_OP_NOT_APPLICABLE: 26,
  FILTERED_OUT: 27,
  NOT_AUTHENTICATED: 80,
  QUOTA_EXCEEDED: 83,
  ERR_UDF: 100,
  ERR_BATCH_DISABLED: 150,
  ERR_BATCH_MAX_REQUESTS_EXCEEDED: 151,
  ERR_BATCH_QUEUES_FULL: 152,
  ERR_INDEX_FOUND: 200,
  ERR_INDEX_NOT_FOUND: 201,
  ERR_INDEX_NOT_READABLE: 203,
  ERR_QUERY_QUEUE_FULL: 211,
  ERR_QUERY_TIMEOUT: 212,
  ERR_UDF_NOT_FOUND: 1301,
  ERR_LUA_FILE_NOT_FOUND: 1302,
  // client-side (negative)
  ERR_CLIENT: -1,
  ERR_PARAM: -2,
  ERR_INVALID_HOST: -4,
  ERR_ASYNC_CONNECTION: -6,
  ERR_NO_MORE_CONNECTIONS: -7,
  ERR_INVALID_NODE: -8,
  ERR_TLS_ERROR: -9,
  ERR_CONNECTION: -10,
  ERR_ASYNC_QUEUE_FULL: -11,
  ERR_MAX_RETRIES_EXCEEDED: -12,
  MAX_ERROR_RATE: -14,
  NO_RESPONSE: -15,
  BATCH_FAILED: -16,
} as const;

const S = AS_STATUS;

const BY_STATUS = new Map<number, EngineErrorCode>([
  [S.ERR_RECORD_EXISTS, 'RECORD_EXISTS'],
  [S.ERR_RECORD_NOT_FOUND, 'RECORD_NOT_FOUND'],
  [S.ERR_RECORD_GENERATION, 'GENERATION_MISMATCH'],
  [S.ERR_RECORD_TOO_BIG, 'RECORD_TOO_BIG'],
  [S.ERR_UDF, 'UDF_ERROR'],
  [S.ERR_UDF_NOT_FOUND, 'UDF_ERROR'],
  [S.ERR_LUA_FILE_NOT_FOUND, 'UDF_ERROR'],
  [S.ERR_TIMEOUT, 'TIMEOUT'],
  [S.ERR_QUERY_TIMEOUT, 'TIMEOUT'],
  [S.ERR_MAX_RETRIES_EXCEEDED, 'TIMEOUT'],
  [S.NO_RESPONSE, 'TIMEOUT'],
  [S.ERR_CONNECTION, 'UNAVAILABLE'],
  [S.ERR_ASYNC_CONNECTION, 'UNAVAILABLE'],
  [S.ERR_NO_MORE_CONNECTIONS, 'UNAVAILABLE'],
  [S.ERR_INVALID_NODE, 'UNAVAILABLE'],
  [S.ERR_INVALID_HOST, 'UNAVAILABLE'],
  [S.ERR_TLS_ERROR, 'UNAVAILABLE'],
  [S.ERR_ASYNC_QUEUE_FULL, 'UNAVAILABLE'],
  [S.MAX_ERROR_RATE, 'UNAVAILABLE'],
  [S.ERR_CLUSTER, 'UNAVAILABLE'],
  [S.ERR_CLUSTER_CHANGE, 'UNAVAILABLE'],
  [S.ERR_SERVER_FULL, 'UNAVAILABLE'],
  [S.ERR_DEVICE_OVERLOAD, 'UNAVAILABLE'],
  [S.ERR_RECORD_BUSY, 'UNAVAILABLE'],
  [S.ERR_BATCH_QUEUES_FULL, 'UNAVAILABLE'],
  [S.ERR_QUERY_QUEUE_FULL, 'UNAVAILABLE'],
  [S.ERR_INDEX_NOT_READABLE, 'UNAVAILABLE'],
  [S.NOT_AUTHENTICATED, 'UNAVAILABLE'],
  [S.QUOTA_EXCEEDED, 'UNAVAILABLE'],
  [S.ERR_PARAM, 'INVALID'],
  [S.ERR_REQUEST_INVALID, 'INVALID'],
  [S.ERR_BIN_INCOMPATIBLE_TYPE, 'INVALID'],
  [S.ERR_BIN_NAME, 'INVALID'],
  [S.ERR_NAMESPACE_NOT_FOUND, 'INVALID'],
  [S.ERR_ALWAYS_FORBIDDEN, 'INVALID'],
  [S.ERR_FAIL_FORBIDDEN, 'INVALID'],
  [S.ERR_UNSUPPORTED_FEATURE, 'INVALID'],
  [S.ERR_ENTERPRISE_ONLY, 'INVALID'],
  [S.ERR_OP_NOT_APPLICABLE, 'INVALID'],
  [S.ERR_RECORD_KEY_MISMATCH, 'INVALID'],
  [S.ERR_BATCH_DISABLED, 'INVALID'],
  [S.ERR_BATCH_MAX_REQUESTS_EXCEEDED, 'INVALID'],
  [S.ERR_INDEX_NOT_FOUND, 'INVALID'],
]);

/** The EngineError code of an Aerospike status code. */
export function engineCodeOf(status: number): EngineErrorCode {
  return BY_STATUS.get(status) ?? 'UNKNOWN';
}

interface AerospikeErrorShape {
  code?: unknown;
  message?: unknown;
  inDoubt?: unknown;
}

/** The status code carried by an AerospikeError (or any error with a numeric `code`), else undefined. */
export function statusOf(err: unknown): number | undefined {
  const code = (err as AerospikeErrorShape | null | undefined)?.code;
  return typeof code === 'number' && Number.isInteger(code) ? code : undefined;
}

/**
 * An AerospikeError (or anything thrown by the client) as an EngineError; `context` (e.g. "create", "apply
 * utxo_x.spendMulti") prefixes the message. EngineErrors pass through unchanged.
 */
export function mapAerospikeError(err: unknown, context?: string): EngineError {
  if (err instanceof EngineError) return err;
  const status = statusOf(err);
  const raw = (err as AerospikeErrorShape | null | undefined)?.message;
  const text = typeof raw === 'string' && raw !== '' ? raw : String(err);
  const inDoubt = (err as AerospikeErrorShape | null | undefined)?.inDoubt === true ? ', in doubt' : '';
  const where = context ? `aerospike ${context}: ` : 'aerospike: ';
  const suffix = status === undefined ? '' : ` (status ${status}${inDoubt})`;
  let code: EngineErrorCode =
    status === undefined ? (err instanceof TypeError ? 'INVALID' : 'UNKNOWN') : engineCodeOf(status);
  // The client's own "Not connected." (status ERR_CLIENT, -1): client.query/scan throw it while the cluster has no
  // reachable node (isConnected() checks the tender), every command sends it after close(). Transient, like a
  // connection error.
  if (status === S.ERR_CLIENT && /^Not connected\b/.test(text)) code = 'UNAVAILABLE';
  return new EngineError(code, `${where}${text}${suffix}`, { cause: err });
}

/** An EngineError for a per-record status of a batch result. */
export function batchStatusError(status: number, context: string): EngineError {
  return new EngineError(engineCodeOf(status), `aerospike ${context}: record failed with status ${status}`);
}
