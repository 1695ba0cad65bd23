import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { loadUdfSource, udfModuleName } from '../../lib/store/udf-module';

describe('UDF module source and name', () => {
  test('the name is utxo_ + the first 12 hex of sha256(source), and changes with the source', () => {
    expect(udfModuleName('abc')).toBe('utxo_ba7816bf8f01');
    expect(udfModuleName('abd')).not.toBe(udfModuleName('abc'));
  });

  test('UTXO_UDF_PATH wins', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'udf-'));
    try {
      const file = path.join(dir, 'x.lua');
      writeFileSync(file, '-- custom');
      expect(loadUdfSource({ UTXO_UDF_PATH: file })).toBe('-- custom');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a missing UTXO_UDF_PATH file is an error', () => {
    expect(() => loadUdfSource({ UTXO_UDF_PATH: '/nonexistent/utxo.lua' })).toThrow();
  });
});
