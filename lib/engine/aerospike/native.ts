/**
 * Lazy loading of the `aerospike` client. It is a native module (prebuilt bindings under
 * node_modules/aerospike/lib/binding/node-v<ABI>-<platform>-<arch>: node-v115 = Node 20, node-v127 = Node 22), so it
 * is only required when an Aerospike engine is actually connected; code paths on the embedded engine never load it.
 */
import type * as Aerospike from 'aerospike';
import { EngineError } from '../port';

export type AerospikeModule = typeof Aerospike;

let loaded: AerospikeModule | undefined;

export function loadAerospike(): AerospikeModule {
  if (loaded) return loaded;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require('aerospike') as AerospikeModule;
    return loaded;
  } catch (err) {
    const binding = `node-v${process.versions.modules}-${process.platform}-${process.arch}`;
    throw new EngineError(
      'UNAVAILABLE',
      `the aerospike client could not be loaded on Node ${process.version} (it needs the prebuilt binding ` +
        `node_modules/aerospike/lib/binding/${binding}): ${(err as Error).message}`,
      { cause: err },
    );
  }
}
