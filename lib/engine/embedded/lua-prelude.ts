/**
 * Lua side of the embedded engine: Aerospike's UDF API (record, aerospike, bytes, list, map, logging) as Lua
 * metatables, the codec of codec.ts, a sandbox for the module and the entry points the runtime calls.
 *
 * Semantics follow aerospike-mod-lua: bytes(n) reserves capacity and starts empty, set_byte / b[i] = v grows the
 * size, reads outside the size give nil, bytes.set_size only reserves capacity; list{...} keeps numeric keys in
 * order and skips nils, l[i] = v beyond the size grows the list with nil elements, take/drop give nil for n <= 0;
 * map keys are integers or strings, assigning nil removes a key. Bin changes are written only by aerospike:create /
 * aerospike:update (a snapshot of the record at that call); a record left with no bins is deleted.
 *
 * Deviations: the objects are Lua tables, so type(x) is 'table' where Aerospike says 'userdata'; pairs() on a list
 * or map raises (as on Aerospike's userdata) and ipairs() works (as in Aerospike).
 *
 * One Lua chunk in three parts, in this order (each part's locals are seen by the parts after it): the bytes type
 * (lua-prelude-bytes.ts), list and map (lua-prelude-collections.ts), the codec, record and aerospike objects, sandbox
 * and entry points (lua-prelude-record.ts).
 */
import { LUA_BYTES } from './lua-prelude-bytes';
import { LUA_COLLECTIONS } from './lua-prelude-collections';
import { LUA_RECORD } from './lua-prelude-record';

/** The parts (each a chunk of whole lines) as one chunk, line for line: Lua's error messages name its lines. */
export const LUA_PRELUDE = `\n${[LUA_BYTES, LUA_COLLECTIONS, LUA_RECORD].map((part) => part.slice(1)).join('')}`;
