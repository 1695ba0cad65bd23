/**
 * What the engine puts on the cluster before it serves: the Lua module (registered unless every node lists it) and
 * the integer indexes on the indexed bins.
 */
import { promises as fs } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import type { Client } from 'aerospike';
import { INDEXED_BINS, type IndexedBin } from '../../domain/bins';
import { EngineError } from '../port';
import { AS_STATUS, mapAerospikeError, statusOf } from './errors';

/** Index name of an indexed bin in a set: `<set>_<bin>`. */
export function indexName(set: string, bin: IndexedBin): string {
  return `${set}_${bin}`;
}

/** Module file names in the answer to the info command `udf-list` ("filename=x.lua,hash=...,type=LUA;..."). */
export function parseUdfList(info: string): string[] {
  const body = info.includes('\t') ? info.slice(info.indexOf('\t') + 1) : info;
  return body
    .trim()
    .split(';')
    .map((entry) => /(?:^|,)filename=([^,]+)/.exec(entry)?.[1])
    .filter((name): name is string => !!name);
}

/** Registers `<name>.lua` (udfRegister of a temporary file) unless every node lists it. */
export async function registerModule(client: Client, name: string, source: string, pollMs: number): Promise<void> {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new EngineError('INVALID', `aerospike: bad UDF module name "${name}"`);
  const file = `${name}.lua`;
  try {
    const answers = await client.infoAll('udf-list');
    const everywhere = answers.length > 0 && answers.every((a) => parseUdfList(a.info).includes(file));
    if (everywhere) return;
    const dir = await fs.mkdtemp(path.join(tmpdir(), 'udf-'));
    try {
      const udfPath = path.join(dir, file);
      await fs.writeFile(udfPath, source);
      const job = await client.udfRegister(udfPath);
      await job.wait(pollMs);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  } catch (err) {
    throw mapAerospikeError(err, `register UDF module ${file}`);
  }
}

/** Creates the integer indexes on deleteAtHeight, unminedSince and preserveUntil; existing ones are fine. */
export async function createIndexes(client: Client, namespace: string, set: string, pollMs: number): Promise<void> {
  for (const bin of INDEXED_BINS) {
    const index = indexName(set, bin);
    try {
      const job = await client.createIntegerIndex({ ns: namespace, set, bin, index });
      await job.wait(pollMs);
    } catch (err) {
      if (statusOf(err) === AS_STATUS.ERR_INDEX_FOUND) continue;
      throw mapAerospikeError(err, `create index ${index}`);
    }
  }
}
