/**
 * The module is sandbox-clean: loading it defines exactly the functions of lib/domain/udf.ts as globals (everything
 * else is local), and it uses no library outside Aerospike's UDF environment (no debug, io, os, require, load).
 */
import { execFileSync } from 'child_process';
import * as path from 'path';
import { UDF_FUNCTIONS } from '../../lib/domain/udf';
import { SOURCE } from './helpers';

/** The source without comments and string literals. */
function code(source: string): string {
  return source
    .replace(/--\[\[[\s\S]*?\]\]/g, '')
    .replace(/--[^\n]*/g, '')
    .replace(/"(?:[^"\\\n]|\\.)*"/g, '""')
    .replace(/'(?:[^'\\\n]|\\.)*'/g, "''");
}

/** Loads the module in a bare Lua environment (wasmoon, in a child process: it needs ESM dynamic import). */
const LOADER = `
const { LuaFactory } = require('wasmoon');
(async () => {
  const lua = await new LuaFactory().createEngine();
  lua.global.set('MODULE_SOURCE', process.env.MODULE_SOURCE);
  const names = await lua.doString(\`
    local env = {
      pcall = pcall, type = type, tostring = tostring, tonumber = tonumber, error = error,
      string = string, table = table, math = math,
      bytes = {}, list = setmetatable({}, { __call = function() return {} end }),
      map = setmetatable({}, { __call = function() return {} end }),
      aerospike = {},
    }
    local before = {}
    for k in pairs(env) do before[k] = true end
    local chunk = assert(load(MODULE_SOURCE, "=utxo", "t", env))
    chunk()
    local added = {}
    for k, v in pairs(env) do
      if not before[k] then added[#added + 1] = k .. ":" .. type(v) end
    end
    table.sort(added)
    return table.concat(added, ",")
  \`);
  process.stdout.write(String(names));
  lua.global.close();
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe('sandbox', () => {
  test('loading defines exactly the exported functions as globals', () => {
    const root = path.join(__dirname, '..', '..');
    const out = execFileSync(process.execPath, ['-e', LOADER], {
      cwd: root,
      env: { ...process.env, MODULE_SOURCE: SOURCE, NODE_PATH: path.join(root, 'node_modules') },
      encoding: 'utf8',
    });
    expect(out.split(',')).toEqual([...UDF_FUNCTIONS].map((f) => `${f}:function`).sort());
  });

  test('no library outside the UDF environment', () => {
    const body = code(SOURCE);
    for (const banned of ['debug', 'io', 'os', 'require', 'load', 'loadstring', 'dofile', 'setfenv', 'rawset', '_G']) {
      expect({ banned, found: new RegExp(`\\b${banned}\\b`).test(body) }).toEqual({ banned, found: false });
    }
  });
});
