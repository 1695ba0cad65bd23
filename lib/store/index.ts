export * from './types';
export { createUtxoStore, type UtxoStoreDeps } from './utxo-store';
export { loadUdfSource, udfModuleName } from './udf-module';
export { lockTtl } from './create';
export { SETTINGS_KEY, CHAIN_TIP_KEY } from './meta';
export { ACK_REFUSAL_REASONS, type AckRefusalReason } from './ack-guard';
