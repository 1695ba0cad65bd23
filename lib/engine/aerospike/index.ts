/**
 * The Aerospike engine. Importing this module does not load the native client: that happens in connectAerospike
 * and in the AerospikeEngine constructor.
 */
export { AerospikeEngine, BATCH_CHUNK, indexName, parseUdfList, type AerospikeEngineOptions } from './engine';
export {
  connectAerospike,
  getSharedAerospikeClient,
  parseHosts,
  aerospikeConfig,
  DEFAULT_MAX_CONNS_PER_NODE,
  type AerospikeConnectOptions,
  type AerospikeTimeouts,
} from './connect';
export { mapAerospikeError, engineCodeOf, statusOf, AS_STATUS } from './errors';
export {
  toAerospikeValue,
  toAerospikeBins,
  toAerospikeMapKey,
  fromAerospikeValue,
  fromAerospikeBins,
  udfResultMap,
  type AerospikeValue,
} from './values';
export { encodeCursor, decodeCursor, checkQueryState, type ExpectedQuery } from './cursor';
export { loadAerospike } from './native';
