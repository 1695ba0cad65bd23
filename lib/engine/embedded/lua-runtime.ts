/**
 * The embedded engine's Lua 5.4 runtime (wasmoon): one Lua state per registered module, created on first use and
 * reused. A call crosses into Lua once, as one binary string in and one binary string out, through the raw Lua C
 * API of the wasm module (wasmoon's own value conversion would re-encode strings as UTF-8 and build proxies).
 */
import type { LuaEngine } from 'wasmoon';
import { EngineError } from '../port';
import { LUA_PRELUDE } from './lua-prelude';
import { getLuaFactory } from './wasmoon-loader';

/** The raw exports of the wasm module that the hot path uses (wasmoon does not type them). */
interface RawLua {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  _lua_getglobal(L: number, name: number): number;
  _lua_pushlstring(L: number, s: number, len: number): number;
  _lua_pcallk(L: number, nargs: number, nresults: number, errfunc: number, ctx: number, k: number): number;
  _lua_tolstring(L: number, idx: number, len: number): number;
  _lua_settop(L: number, idx: number): void;
  stringToNewUTF8(s: string): number;
}

/** What a UDF call produced, before the engine applies it. */
export interface UdfOutcome {
  op: 'none' | 'write' | 'remove';
  /** the ttl set by record.set_ttl, or undefined when the UDF did not call it */
  ttl?: number;
  /** the record's bins (codec.ts record encoding) when op is 'write' */
  bins: Buffer;
  /** the encoded return value */
  result: Buffer;
}

export interface UdfInput {
  fn: string;
  exists: boolean;
  generation: number;
  ttl: number;
  key: Buffer;
  bins: Buffer;
  /** the arguments, encoded as one list value */
  args: Buffer;
}

const TTL_UNSET = -(2n ** 63n);

/** One module loaded into its own Lua state. */
export class LuaModule {
  private readonly raw: RawLua;
  private readonly L: number;
  private readonly callName: number;
  private readonly loadName: number;
  private readonly lenPtr: number;
  private scratch = 0;
  private scratchSize = 0;
  private closed = false;

  private constructor(
    readonly name: string,
    private readonly engine: LuaEngine,
  ) {
    this.raw = engine.global.lua.module as unknown as RawLua;
    this.L = engine.global.address;
    this.callName = this.raw.stringToNewUTF8('__udf_call');
    this.loadName = this.raw.stringToNewUTF8('__load_module');
    this.lenPtr = this.raw._malloc(4);
  }

  /** Creates a Lua state with the prelude and runs the module's chunk in its sandbox; INVALID if it fails. */
  static async load(name: string, source: string): Promise<LuaModule> {
    const engine = await (
      await getLuaFactory()
    ).createEngine({
      openStandardLibs: true,
      injectObjects: false,
      enableProxy: false,
    });
    const mod = new LuaModule(name, engine);
    try {
      engine.doStringSync(LUA_PRELUDE);
      const out = mod.invoke(mod.loadName, [Buffer.from(name), Buffer.from(source)]);
      if (out[0] !== 0x4f /* 'O' */) {
        throw new EngineError('INVALID', `UDF module ${name} does not load: ${out.subarray(1).toString()}`);
      }
      return mod;
    } catch (err) {
      mod.close();
      throw err;
    }
  }

  /** Runs one function of the module on one record. UDF_ERROR when the Lua code raises. */
  call(input: UdfInput): UdfOutcome {
    const fn = Buffer.from(input.fn);
    const header = Buffer.allocUnsafe(2 + fn.length + 1 + 8 + 8);
    let p = header.writeUInt16LE(fn.length, 0);
    p += fn.copy(header, p);
    p = header.writeUInt8(input.exists ? 1 : 0, p);
    p = header.writeBigInt64LE(BigInt(input.generation), p);
    header.writeBigInt64LE(BigInt(input.ttl), p);
    const u32 = (n: number) => {
      const b = Buffer.allocUnsafe(4);
      b.writeUInt32LE(n, 0);
      return b;
    };
    const packed = Buffer.concat([
      header,
      u32(input.key.length),
      input.key,
      u32(input.bins.length),
      input.bins,
      u32(input.args.length),
      input.args,
    ]);
    const out = this.invoke(this.callName, [packed]);
    if (out[0] !== 0x4f /* 'O' */) throw new EngineError('UDF_ERROR', out.subarray(1).toString());
    const op = out[1];
    const ttl = out.readBigInt64LE(2);
    const binsLen = out.readUInt32LE(10);
    const bins = out.subarray(14, 14 + binsLen);
    return {
      op: op === 1 ? 'write' : op === 2 ? 'remove' : 'none',
      ttl: ttl === TTL_UNSET ? undefined : Number(ttl),
      bins,
      result: out.subarray(14 + binsLen),
    };
  }

  /** Calls a global Lua function with string arguments; returns its string result. */
  private invoke(fnName: number, args: Buffer[]): Buffer {
    if (this.closed) throw new EngineError('UNAVAILABLE', `UDF module ${this.name} is closed`);
    const { raw, L } = this;
    raw._lua_settop(L, 0);
    raw._lua_getglobal(L, fnName);
    for (const arg of args) {
      const ptr = this.reserve(arg.length);
      raw.HEAPU8.set(arg, ptr);
      raw._lua_pushlstring(L, ptr, arg.length);
    }
    const status = raw._lua_pcallk(L, args.length, 1, 0, 0, 0);
    const ptr = raw._lua_tolstring(L, -1, this.lenPtr);
    const len = raw.HEAPU32[this.lenPtr >>> 2];
    // copy out before the stack is reset: the string is owned by Lua
    const out = ptr === 0 ? Buffer.from('Enon-string result') : Buffer.from(raw.HEAPU8.subarray(ptr, ptr + len));
    raw._lua_settop(L, 0);
    if (status !== 0) return Buffer.concat([Buffer.from('E'), out]);
    return out;
  }

  /** A reusable wasm buffer for arguments (Lua copies them when they are pushed). */
  private reserve(size: number): number {
    if (size > this.scratchSize) {
      if (this.scratch) this.raw._free(this.scratch);
      this.scratchSize = Math.max(size, this.scratchSize * 2, 4096);
      this.scratch = this.raw._malloc(this.scratchSize);
      if (!this.scratch) throw new EngineError('UNKNOWN', 'Lua runtime out of memory');
    }
    return this.scratch;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.scratch) this.raw._free(this.scratch);
    this.raw._free(this.callName);
    this.raw._free(this.loadName);
    this.raw._free(this.lenPtr);
    this.engine.global.close();
  }
}
