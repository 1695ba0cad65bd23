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
  /**
   * most outputs one get may list (MAX_GET_OUTPUTS): get of `utxos` sums the txs' totalUtxos from their masters and
   * refuses more (TOO_MANY_OUTPUTS) before reading a pagination record or building a view; unset: no cap
   */
  maxGetOutputs?: number;
  /** most bytes of transactions one get with `tx` may answer (MAX_GET_TX_BYTES; TXS_TOO_LARGE); unset: no cap */
  maxGetTxBytes?: number;
  /** records per engine batch of a batched operation (ENGINE_BATCH_SIZE; default 100) */
  engineBatchSize?: number;
  /**
   * SPEND_ACK_GUARD (lib/store/ack-guard.ts): `refuse` (default) answers a spend as in doubt (STORAGE_ERROR) instead
   * of acknowledging it while a node may still bring writes applied outside the majority back (a node orphaned or
   * silent inside the cluster, nodes disagreeing, a cluster below the majority of AEROSPIKE_CLUSTER_SIZE); `settled`
   * also while the cluster is not whole or migrations are pending (decision 0006); `off` acknowledges it
   */
  spendAckGuard?: 'refuse' | 'settled' | 'off';
  /**
   * AEROSPIKE_CLUSTER_SIZE: the nodes the cluster has; its majority is the smallest cluster `refuse` acknowledges in
   * (0 or unset: every node the client knows must answer; `settled`: any size, all nodes agreeing)
   */
  clusterSize?: number;
}
