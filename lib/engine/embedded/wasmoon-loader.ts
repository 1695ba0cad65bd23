/**
 * Loads wasmoon's LuaFactory. wasmoon's bundle initializes with `await import('module')`; code evaluated by jest's
 * module sandbox cannot run a dynamic import (jest requires --experimental-vm-modules), so when the normal load
 * fails that way the bundle is compiled in Node's main context with that one import replaced by require('module').
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import * as wasmoon from 'wasmoon';
import type { LuaFactory } from 'wasmoon';

type Wasmoon = typeof import('wasmoon');

const DYNAMIC_IMPORT = "await import('module')";

function loadInMainContext(): Wasmoon {
  const file = require.resolve('wasmoon');
  const source = fs.readFileSync(file, 'utf8');
  if (!source.includes(DYNAMIC_IMPORT)) throw new Error(`wasmoon at ${file} does not have the expected loader`);
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source.replace(
    DYNAMIC_IMPORT,
    "require('module')",
  )}\n})`;
  const fn = new vm.Script(wrapped, { filename: file }).runInThisContext() as (...args: unknown[]) => void;
  const mod = { exports: {} as Wasmoon };
  fn(mod.exports, require, mod, file, path.dirname(file));
  return mod.exports;
}

async function ready(factory: LuaFactory): Promise<LuaFactory> {
  await factory.getLuaModule();
  return factory;
}

let factory: Promise<LuaFactory> | undefined;

export function getLuaFactory(): Promise<LuaFactory> {
  factory ??= (async () => {
    try {
      return await ready(new wasmoon.LuaFactory());
    } catch (err) {
      if (!String(err).includes('dynamic import')) throw err;
      return ready(new (loadInMainContext().LuaFactory)());
    }
  })();
  return factory;
}
