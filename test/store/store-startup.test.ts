/**
 * A store that starts while the cluster changes (a Lambda execution environment or a node service starting during a
 * fault): the settings record's node may be gone from the client's partition map for about a tend interval, so the
 * start-up asks again (UNAVAILABLE, TIMEOUT) within SETTINGS_STARTUP_BUDGET_MS instead of failing; anything else, or
 * a fault that outlasts the budget, fails the start with STORAGE_ERROR naming the step.
 */
import { FileBlobStore } from '../../lib/blob';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import { EngineError, type RecordEngine } from '../../lib/engine/port';
import { InlineQueue } from '../../lib/signals';
import { ensureBatchSize, SETTINGS_KEY } from '../../lib/store/meta';
import { createUtxoStore } from '../../lib/store/utxo-store';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { overriding } from './doubles';
import { BASE_SETTINGS } from './store-contract';

const dir = mkdtempSync(path.join(tmpdir(), 'store-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** the embedded engine whose first `failures` creates and gets throw `code` (counted in `calls`) */
async function flaky(failures: number, code: 'UNAVAILABLE' | 'TIMEOUT' | 'INVALID') {
  const inner = await openEmbeddedEngine({ path: ':memory:' });
  const calls = { create: 0, get: 0 };
  const engine: RecordEngine = overriding(inner, {
    create: async (...args: Parameters<RecordEngine['create']>) => {
      if (++calls.create <= failures) throw new EngineError(code, `injected ${code} (node not in the partition map)`);
      return inner.create(...args);
    },
    get: async (...args: Parameters<RecordEngine['get']>) => {
      if (++calls.get <= failures) throw new EngineError(code, `injected ${code}`);
      return inner.get(...args);
    },
  });
  return { inner, engine, calls };
}

function storeOn(engine: RecordEngine) {
  return createUtxoStore({
    engine,
    blobs: new FileBlobStore({ dir }),
    signals: new InlineQueue({ handler: { handle: async () => undefined } }),
    settings: BASE_SETTINGS,
  });
}

test('a store started while a node is gone from the partition map waits for the next map and starts', async () => {
  const { inner, engine, calls } = await flaky(3, 'UNAVAILABLE');
  await expect(storeOn(engine)).resolves.toBeDefined();
  expect(calls.create).toBe(4);
  expect((await inner.get(SETTINGS_KEY))?.bins.utxoBatchSize).toBe(BASE_SETTINGS.utxoBatchSize);
});

test('a second start reads the recorded settings, asking again through timeouts', async () => {
  const { inner, engine, calls } = await flaky(0, 'TIMEOUT');
  await storeOn(engine);
  const again = overriding(inner, {
    get: async (...args: Parameters<RecordEngine['get']>) => {
      if (++calls.get <= 2) throw new EngineError('TIMEOUT', 'injected TIMEOUT');
      return inner.get(...args);
    },
  });
  await expect(storeOn(again)).resolves.toBeDefined();
  expect(calls.get).toBe(3);
});

test('a fault that outlasts the start-up budget fails the start with STORAGE_ERROR naming the step', async () => {
  const { engine, calls } = await flaky(Infinity, 'UNAVAILABLE');
  let t = 0;
  const clock = () => (t += 400); // each attempt 400 ms later: a 1 s budget allows 2 more attempts
  await expect(ensureBatchSize(engine, BASE_SETTINGS.utxoBatchSize, 1000, clock)).rejects.toMatchObject({
    code: 'STORAGE_ERROR',
    message: expect.stringMatching(/^recording the store settings failed: injected UNAVAILABLE/),
  });
  expect(calls.create).toBe(2);
});

test('an error that is not transient is not asked again', async () => {
  const { engine, calls } = await flaky(1, 'INVALID');
  await expect(storeOn(engine)).rejects.toMatchObject({
    code: 'STORAGE_ERROR',
    message: expect.stringMatching(/recording the store settings failed: injected INVALID/),
  });
  expect(calls.create).toBe(1);
});
