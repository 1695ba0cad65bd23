/**
 * What the engine puts on the cluster before it serves: the Lua module (registered unless every node lists it) and
 * the integer indexes on the indexed bins. Every wait here has a deadline (lib/engine/deadline.ts): an expired one
 * is a DeadlineError naming the operation.
 *
 * Completion is polled with the engine's own info commands, not the client's job.wait: the node client's
 * IndexJob.wait asks `sindex/<ns>/<index>` through infoAll, whose request limit (49 characters,
 * lib/domain/engine-limits.ts) it cuts silently at 50, so for a long index name it waits forever. `sindex-list:ns=<ns>`
 * is at most 46 characters for any namespace.
 */
import { infoAllRetrying } from './info-all';
import { createHash } from 'crypto';
import { promises as fs } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import type { Client } from 'aerospike';
import { INDEXED_BINS, type IndexedBin } from '../../domain/bins';
import { pollUntil, retryWhile, withDeadline } from '../deadline';
import { EngineError } from '../port';
import { AS_STATUS, mapAerospikeError, statusOf } from './errors';

/** ms the module registration or one index build may take before the engine gives up on it (default) */
export const SCHEMA_DEADLINE_MS = 120_000;
/** characters of the set name an index name starts with */
const READABLE_PREFIX = 16;

/**
 * Index name of an indexed bin in a set: `<first 16 characters of the set>_<8 hex of sha256(set)>_<bin>`, at most
 * 40 characters whatever the set (Aerospike allows 63): readable, and distinct for sets that share a prefix.
 */
export function indexName(set: string, bin: IndexedBin): string {
  const hash = createHash('sha256').update(set).digest('hex').slice(0, 8);
  return `${set.slice(0, READABLE_PREFIX)}_${hash}_${bin}`;
}

/**
 * The index name releases before this one used, `<set>_<bin>`. The server keeps one index per definition
 * (namespace, set, bin, type) and a create under another name renames it in place, so the first start of this release
 * renames an index of the old name (docs/runbook.md, "Index names").
 */
export function legacyIndexName(set: string, bin: IndexedBin): string {
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

/** One index in the answer to `sindex-list` ("ns=x:indexname=y:set=z:bin=b:...:state=RW;..."). */
export interface ListedIndex {
  indexname: string;
  set: string;
  bin: string;
  /** RW: built and readable; WO: building; ERROR */
  state: string;
}

export function parseSindexList(info: string): ListedIndex[] {
  const body = info.includes('\t') ? info.slice(info.indexOf('\t') + 1) : info;
  return body
    .trim()
    .split(';')
    .filter((entry) => entry.includes('indexname='))
    .map((entry) => {
      const fields = new Map(
        entry.split(':').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      return {
        indexname: fields.get('indexname') ?? '',
        set: fields.get('set') ?? '',
        bin: fields.get('bin') ?? '',
        state: fields.get('state') ?? '',
      };
    });
}

export interface SchemaOptions {
  client: Client;
  pollMs: number;
  deadlineMs: number;
}

/**
 * The server's answer to a UDF registration when its cluster metadata could not be agreed in time (a cluster still
 * forming or changing, seen on CE 8.1.2 right after a 3-node cluster formed): worth sending again.
 */
const metadataTimeout = (err: unknown) =>
  !(err instanceof EngineError) && /error=timeout/.test(String((err as Error | undefined)?.message));

/** Registers `<name>.lua` (udfRegister of a temporary file) unless every node lists it, and waits until every does. */
export async function registerModule(options: SchemaOptions, name: string, source: string): Promise<void> {
  const { client, pollMs, deadlineMs } = options;
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new EngineError('INVALID', `aerospike: bad UDF module name "${name}"`);
  const file = `${name}.lua`;
  const operation = `aerospike register UDF module ${file}`;
  const everywhere = async () => {
    const answers = await withDeadline(
      infoAllRetrying(client, 'udf-list', deadlineMs),
      deadlineMs,
      `${operation} (udf-list)`,
    );
    return answers.length > 0 && answers.every((a) => parseUdfList(a.info).includes(file));
  };
  try {
    if (await everywhere()) return;
    const dir = await fs.mkdtemp(path.join(tmpdir(), 'udf-'));
    try {
      const udfPath = path.join(dir, file);
      await fs.writeFile(udfPath, source);
      const until = Date.now() + deadlineMs;
      await retryWhile(
        () => withDeadline(client.udfRegister(udfPath), Math.max(1, until - Date.now()), operation),
        metadataTimeout,
        until,
        pollMs,
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
    await pollUntil(everywhere, { pollMs, deadlineMs, operation });
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw mapAerospikeError(err, `register UDF module ${file}`);
  }
}

/**
 * Creates the integer indexes on deleteAtHeight, unminedSince and preserveUntil under indexName() (an index of the
 * same definition under another name, e.g. legacyIndexName(), is renamed by the server), and waits until every node
 * lists each one readable.
 */
export async function createIndexes(options: SchemaOptions, namespace: string, set: string): Promise<void> {
  const { client, pollMs, deadlineMs } = options;
  const listed = async (): Promise<ListedIndex[][]> => {
    const answers = await withDeadline(
      client.infoAll(`sindex-list:ns=${namespace}`),
      deadlineMs,
      `aerospike list indexes of ${namespace}`,
    );
    return answers.map((a) => parseSindexList(a.info ?? ''));
  };
  for (const bin of INDEXED_BINS) {
    const index = indexName(set, bin);
    const operation = `aerospike create index ${index}`;
    const states = async () => (await listed()).map((node) => node.find((i) => i.indexname === index)?.state);
    const ready = async () => {
      const s = await states();
      if (s.includes('ERROR')) throw new EngineError('UNKNOWN', `${operation}: a node reports the index in ERROR`);
      return s.length > 0 && s.every((state) => state === 'RW');
    };
    try {
      if (await ready()) continue;
      try {
        await withDeadline(client.createIntegerIndex({ ns: namespace, set, bin, index }), deadlineMs, operation);
      } catch (err) {
        if (statusOf(err) !== AS_STATUS.ERR_INDEX_FOUND) throw err;
      }
      await pollUntil(ready, { pollMs, deadlineMs, operation });
    } catch (err) {
      if (err instanceof EngineError) throw err;
      throw mapAerospikeError(err, `create index ${index}`);
    }
  }
}
