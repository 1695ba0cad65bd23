/**
 * The Lua UDF module source and its content-versioned name: a changed module is registered under a new name, so a
 * running cluster never executes a mix of old and new code under one name.
 */
import { createHash } from 'crypto';
import { existsSync, readFileSync } from 'fs';
import * as path from 'path';

/** Reads the UDF source: $UTXO_UDF_PATH, else utxo.lua beside this file (Lambda bundle), else the repo's lua/. */
export function loadUdfSource(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.UTXO_UDF_PATH;
  if (explicit) return readFileSync(explicit, 'utf8');
  const bundled = path.join(__dirname, 'utxo.lua');
  if (existsSync(bundled)) return readFileSync(bundled, 'utf8');
  return readFileSync(path.join(__dirname, '..', '..', 'lua', 'utxo.lua'), 'utf8');
}

/** `utxo_<first 12 hex of sha256(source)>` */
export function udfModuleName(source: string): string {
  return `utxo_${createHash('sha256').update(source).digest('hex').slice(0, 12)}`;
}
