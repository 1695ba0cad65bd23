/** The configuration's error and the checks every area shares (cdk/config.ts composes the areas). */

export class ConfigurationError extends Error {
  constructor(key: string, problem: string) {
    super(`cdk context "${key}": ${problem}`);
    this.name = 'ConfigurationError';
  }
}

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function int(key: string, v: unknown, min: number, max: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new ConfigurationError(key, `expected an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
}

export function bool(key: string, v: unknown): void {
  if (typeof v !== 'boolean') throw new ConfigurationError(key, 'expected a boolean');
}

/**
 * A value that reaches a node's shell scripts or user data (cdk/aerospike-scripts.ts quotes it too): every character
 * must be in `set`, the value at most `max` long, else synthesis stops naming the key and the first bad character.
 */
export function scriptSafe(key: string, v: unknown, set: RegExp, what: string, max: number): void {
  if (typeof v !== 'string' || v.length === 0 || v.length > max)
    throw new ConfigurationError(key, `expected ${what}, 1 to ${max} characters, got ${JSON.stringify(v)}`);
  const bad = [...v].find((ch) => !set.test(ch));
  if (bad !== undefined)
    throw new ConfigurationError(
      key,
      `${JSON.stringify(bad)} is not allowed in ${what} (it reaches the nodes' scripts): ${JSON.stringify(v)}`,
    );
}

/**
 * What one area of the configuration adds to the context parser: its flat `-c` keys (key -> path in
 * UtxoStoreConfig), the keys that may be absent from the defaults (optional settings a `stages.<stage>` object may
 * still name), the paths whose CLI string is a comma-separated list or an integer although the default is unset, and
 * the paths with a parser of their own.
 */
export interface ContextSpec {
  keys: Record<string, string>;
  optional?: readonly string[];
  listPaths?: readonly string[];
  intPaths?: readonly string[];
  /** paths whose CLI string has its own syntax (e.g. `region:ami-id,...`), with their parser */
  parsers?: Record<string, (key: string, raw: string) => unknown>;
}
