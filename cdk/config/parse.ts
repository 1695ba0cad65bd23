/**
 * Context parsing: merging a `stages.<stage>` object over the defaults and converting `-c key=value` strings to the
 * type of the setting. The keys and their paths come from the areas' ContextSpecs (cdk/config.ts).
 */
import { ConfigurationError, isObject, type ContextSpec, type Json } from './errors';

/** Merges `over` into `base`; a key that is neither in `base` nor in `allowed` is an unknown setting. */
export function deepMerge<T>(base: T, over: unknown, where: string, allowed: ReadonlySet<string>): T {
  if (over === undefined) return base;
  if (!isObject(over)) throw new ConfigurationError(where, 'expected an object');
  const out: Json = { ...(base as Json) };
  for (const [k, v] of Object.entries(over)) {
    if (!(k in out) && !allowed.has(k)) throw new ConfigurationError(`${where}.${k}`, 'unknown setting');
    out[k] = isObject(v) && isObject(out[k]) ? deepMerge(out[k], v, `${where}.${k}`, allowed) : v;
  }
  return out as T;
}

export function setPath(target: Json, path: string, value: unknown): void {
  const parts = path.split('.');
  let obj = target;
  for (const p of parts.slice(0, -1)) obj = obj[p] as Json;
  obj[parts[parts.length - 1]] = value;
}

export function getPath(target: Json, path: string): unknown {
  return path.split('.').reduce<unknown>((o, p) => (isObject(o) ? o[p] : undefined), target);
}

/** Converts a CLI string to the type of the default (number, boolean, string list) or by the path's own parser. */
export function coerce(
  spec: Required<Omit<ContextSpec, 'optional'>>,
  key: string,
  raw: unknown,
  like: unknown,
  path: string,
): unknown {
  if (typeof raw !== 'string') return raw;
  const parser = spec.parsers[path];
  if (parser) return parser(key, raw);
  if (spec.listPaths.includes(path))
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (typeof like === 'number' || spec.intPaths.includes(path)) {
    if (!/^-?\d+(\.\d+)?$/.test(raw.trim())) throw new ConfigurationError(key, `expected a number, got "${raw}"`);
    return Number(raw);
  }
  if (typeof like === 'boolean') {
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
    throw new ConfigurationError(key, `expected true or false, got "${raw}"`);
  }
  return raw;
}

/** The areas' specs as one. */
export function combineSpecs(specs: readonly ContextSpec[]): Required<ContextSpec> {
  return {
    keys: Object.assign({}, ...specs.map((s) => s.keys)) as Record<string, string>,
    optional: specs.flatMap((s) => s.optional ?? []),
    listPaths: specs.flatMap((s) => s.listPaths ?? []),
    intPaths: specs.flatMap((s) => s.intPaths ?? []),
    parsers: Object.assign({}, ...specs.map((s) => s.parsers ?? {})) as Record<
      string,
      (key: string, raw: string) => unknown
    >,
  };
}
