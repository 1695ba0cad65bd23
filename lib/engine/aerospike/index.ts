/**
 * The Aerospike engine. Importing this module does not load the native client: that happens in connectAerospike
 * and in the AerospikeEngine constructor.
 */
export {
  AerospikeEngine,
  BATCH_CHUNK,
  indexName,
  legacyIndexName,
  parseSindexList,
  parseUdfList,
  SCHEMA_DEADLINE_MS,
  type AerospikeEngineOptions,
} from './engine';
export {
  connectAerospike,
  connectClient,
  getSharedAerospikeClient,
  closeSharedAerospikeClients,
  parseHosts,
  aerospikeConfig,
  commandQueuePolicy,
  setupCommandQueue,
  DEFAULT_MAX_CONNS_PER_NODE,
  DEFAULT_MAX_COMMANDS_IN_QUEUE,
  type AerospikeConnectOptions,
  type CommandQueueOptions,
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
export {
  checkNamespace,
  namespaceConfigProblem,
  parseNamespaceInfo,
  NAMESPACE_CHECK_DEADLINE_MS,
} from './namespace-check';
export {
  checkClusterSize,
  clusterSizeProblem,
  CLUSTER_SIZE_CHECK_DEADLINE_MS,
  type ClusterSizeFacts,
} from './cluster-size-check';
