/** Connect during init: inside Lambda the runtime (engine connection, UDF registration) starts at module load. */
import { currentRuntime, resetRuntime, warmRuntime } from '../../lib/runtime';

const ENV = { UTXO_STORE: 'embedded::memory:', BLOB_STORE: 'file:/tmp/warm-runtime-blobs', SIGNAL_QUEUE: 'inline' };

afterEach(async () => {
  await resetRuntime({ close: true });
});

test('outside Lambda nothing is built until the first request', async () => {
  await resetRuntime({ env: ENV });
  warmRuntime({});
  await expect(currentRuntime()).resolves.toBeUndefined();
});

test('inside Lambda (AWS_LAMBDA_FUNCTION_NAME) the runtime is built at init, before any invocation', async () => {
  await resetRuntime({ env: ENV });
  warmRuntime({ AWS_LAMBDA_FUNCTION_NAME: 'utxo-spend' });
  const runtime = await currentRuntime();
  expect(runtime?.store.moduleName).toMatch(/^utxo_/);
});

test('a failed init is not fatal and is retried by the next getRuntime()', async () => {
  await resetRuntime({ env: { ...ENV, UTXO_STORE: 'nonsense' } });
  warmRuntime({ AWS_LAMBDA_FUNCTION_NAME: 'utxo-spend' });
  await expect(currentRuntime()).resolves.toBeUndefined();
  await resetRuntime({ env: ENV });
  warmRuntime({ AWS_LAMBDA_FUNCTION_NAME: 'utxo-spend' });
  await expect(currentRuntime()).resolves.toBeDefined();
});
