/** The RecordEngine contract's module, key and error helpers (engine-contract.ts, engine-contract-ops.ts). */
import { randomBytes } from 'node:crypto';
import { EngineError, type BinValue, type EngineErrorCode, type RecordEngine } from '../../lib/engine/port';

export interface OpenedEngine {
  engine: RecordEngine;
  close(): Promise<void>;
  /**
   * Closes the engine and opens it again on the same data (the embedded engine on a file). What a reopen shows of a
   * removed record is what a restart of the store's process shows; an Aerospike server restart cannot be run here.
   */
  reopen?(): Promise<RecordEngine>;
}

/** A small UDF module exercising reads, writes, removal, errors and argument/return values. */
export const CONTRACT_MODULE = `
function echo(rec, ...)
  local args = list()
  for i = 1, select('#', ...) do args[i] = select(i, ...) end
  return map{ exists = aerospike:exists(rec), args = args }
end

function setBin(rec, name, value)
  rec[name] = value
  if aerospike:exists(rec) then aerospike:update(rec) else aerospike:create(rec) end
  return map{ status = 'OK', gen = record.gen(rec) }
end

function increment(rec, by)
  if not aerospike:exists(rec) then return map{ status = 'ERROR', errorCode = 'TX_NOT_FOUND' } end
  rec['counter'] = (rec['counter'] or 0) + by
  aerospike:update(rec)
  return map{ status = 'OK', counter = rec['counter'] }
end

function writeThenFail(rec)
  rec['counter'] = 999
  aerospike:update(rec)
  error('failing on purpose')
end

function drop(rec)
  if not aerospike:exists(rec) then return map{ removed = false } end
  aerospike:remove(rec)
  return map{ removed = true }
end

function getBin(rec, name)
  return map{ value = rec[name] }
end

function meta(rec)
  if not aerospike:exists(rec) then return map{ exists = false } end
  return map{ exists = true, tombstone = rec['tombstone'], ttl = record.ttl(rec), gen = record.gen(rec) }
end
`;

export const CONTRACT_MODULE_NAME = 'engine_contract_v1';

/** A call of the contract module's function `fn`. */
export const udf = (fn: string, ...args: BinValue[]) => ({ module: CONTRACT_MODULE_NAME, fn, args });

export function newKey(): Buffer {
  return randomBytes(32);
}

export async function expectEngineError(p: Promise<unknown>, code: EngineErrorCode): Promise<EngineError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  expect((err as EngineError).code).toBe(code);
  return err as EngineError;
}
