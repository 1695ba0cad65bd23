/**
 * The store's settings (lib/store), at the bottom of the layers: the service's configuration (config.ts) builds them
 * from the environment, the store and the reconciler read them.
 */
export interface StoreSettings {
  /** B: outputs per record; fixed for the life of a store */
  utxoBatchSize: number;
  /** R: blocks a fully spent tx is kept before deletion; 0 disables DAH */
  blockHeightRetention: number;
  /** extended size above which a tx goes to the blob store */
  maxTxSizeInStore: number;
  externalizeAll: boolean;
  coinbaseMaturity: number;
  /**
   * blocks PUT /v1/chain/tip may move H forward per call without `force` (MAX_TIP_ADVANCE); unset: no bound
   * (the service always sets it, lib/domain/config.ts)
   */
  maxTipAdvance?: number;
  /** records per engine batch of a batched operation (ENGINE_BATCH_SIZE; default 100) */
  engineBatchSize?: number;
  /**
   * SPEND_ACK_GUARD: `refuse` (default) answers a spend applied while the replicated engine's cluster is not settled
   * as in doubt (STORAGE_ERROR) instead of acknowledging it; `off` acknowledges it (lib/store/spend-many.ts)
   */
  spendAckGuard?: 'refuse' | 'off';
  /** AEROSPIKE_CLUSTER_SIZE: the nodes a settled cluster has (0 or unset: any size, all nodes agreeing) */
  clusterSize?: number;
}
