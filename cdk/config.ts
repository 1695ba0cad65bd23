/**
 * The deployment's configuration: one typed props object with defaults (docs/settings.md for the store settings).
 *
 * Precedence, lowest first: DEFAULTS -> `stages.<stage>` in cdk.json context (an object with the keys of
 * `UtxoStoreConfig`, nested like it) -> individual context keys (`-c key=value`, see CONTEXT_KEYS). Every value is
 * validated and an invalid one stops synthesis with a message naming the context key.
 *
 * Each area of the configuration lives in cdk/config/<area>.ts with its settings' type, defaults, context keys
 * (a ContextSpec) and validation; this file composes them. A new setting goes into its area's four places.
 */
import { AEROSPIKE_CONTEXT, aerospikeDefaults, validateAerospike, type AerospikeConfig } from './config/aerospike';
import { API_CONTEXT, apiDefaults, validateApi, validateApiThrottles, type ApiSettings } from './config/api';
import { ConfigurationError, isObject, type Json } from './config/errors';
import {
  connectionBudget,
  FUNCTION_CONTEXT_KEYS,
  FUNCTION_NAMES,
  FUNCTION_OPTIONAL_KEYS,
  functionDefaults,
  perFunction,
  validateFunctions,
  type FunctionName,
  type FunctionTuning,
} from './config/functions';
import {
  NETWORK_CONTEXT,
  networkDefaults,
  validateNetwork,
  validateStage,
  type NetworkSettings,
} from './config/network';
import {
  OPERATIONS_CONTEXT,
  operationsDefaults,
  validateObservability,
  validateOperations,
  validateSignals,
  type OperationsSettings,
} from './config/operations';
import { combineSpecs, coerce, deepMerge, getPath, setPath } from './config/parse';
import { STORE_CONTEXT, storeDefaults, validateStore, type StoreConfig } from './config/store';

export * from './config/aerospike';
export * from './config/api';
export { ConfigurationError } from './config/errors';
export * from './config/functions';
export * from './config/network';
export * from './config/operations';
export * from './config/store';

export interface UtxoStoreConfig extends NetworkSettings, ApiSettings, OperationsSettings {
  /** e.g. dev, staging, prod; names the stack (`BsvUtxoStore-<stage>`) */
  stage: string;
  aerospike: AerospikeConfig;
  store: StoreConfig;
  functions: Record<FunctionName, FunctionTuning>;
}

export function defaultConfig(stage = 'dev'): UtxoStoreConfig {
  return {
    stage,
    ...networkDefaults(),
    aerospike: aerospikeDefaults(stage),
    store: storeDefaults(),
    functions: functionDefaults(),
    ...apiDefaults(),
    ...operationsDefaults(stage),
  };
}

const SPEC = combineSpecs([NETWORK_CONTEXT, AEROSPIKE_CONTEXT, API_CONTEXT, STORE_CONTEXT, OPERATIONS_CONTEXT]);

/** The flat context keys (`-c key=value`) and where each lands in UtxoStoreConfig. */
export const CONTEXT_KEYS: Readonly<Record<string, string>> = SPEC.keys;

/** Keys a `stages.<stage>` object may name although the defaults leave them unset. */
const MERGE_ALLOWED = new Set<string>([...SPEC.optional, ...FUNCTION_OPTIONAL_KEYS, ...FUNCTION_NAMES]);

export function validateConfig(c: UtxoStoreConfig): UtxoStoreConfig {
  validateStage(c.stage);
  validateNetwork(c);
  validateAerospike(c);
  validateStore(c.store);
  validateFunctions(c.functions);
  validateSignals(c);
  validateApi(c);
  connectionBudget(c);
  validateOperations(c);
  validateApiThrottles(c);
  validateObservability(c);
  return c;
}

/** Anything with tryGetContext (an App or a construct node). */
export interface ContextSource {
  tryGetContext(key: string): unknown;
}

export function loadConfig(ctx: ContextSource): UtxoStoreConfig {
  const stageRaw = ctx.tryGetContext('stage');
  const stage = stageRaw === undefined ? 'dev' : String(stageRaw);
  let config = defaultConfig(stage);
  const stages = ctx.tryGetContext('stages');
  if (stages !== undefined) {
    if (!isObject(stages)) throw new ConfigurationError('stages', 'expected an object of stage -> settings');
    config = deepMerge(config, stages[stage], `stages.${stage}`, MERGE_ALLOWED);
  }
  const flat = config as unknown as Json;
  for (const [key, path] of Object.entries(CONTEXT_KEYS)) {
    const raw = ctx.tryGetContext(key);
    if (raw === undefined) continue;
    setPath(flat, path, coerce(SPEC, key, raw, getPath(flat, path), path));
  }
  for (const [field, key] of Object.entries(FUNCTION_CONTEXT_KEYS)) {
    const raw = ctx.tryGetContext(key);
    if (raw === undefined) continue;
    for (const [name, value] of Object.entries(perFunction(key, raw)))
      (config.functions[name as FunctionName] as unknown as Json)[field] = value;
  }
  return validateConfig(config);
}
