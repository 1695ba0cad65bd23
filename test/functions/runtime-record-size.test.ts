/**
 * The embedded engine of the runtime takes the same maximum record size as the Aerospike namespace the CDK app
 * configures (B slots of 68 bytes + the tx when stored + small bins, in whole MiB): with the default B = 20000 a
 * master grows past 1 MiB as its outputs are spent, which a fixed 1 MiB limit refused (RECORD_TOO_BIG) locally.
 */
import { loadConfig } from '../../lib/domain/config';
import { maxRecordSizeBytes } from '../../lib/domain/record-size';
import { EngineError } from '../../lib/engine/port';
import { buildRuntime } from '../../lib/runtime';

const MiB = 1024 * 1024;

async function writeRecordOf(env: Record<string, string>, bytes: number): Promise<string> {
  const runtime = await buildRuntime(loadConfig({ UTXO_STORE: 'embedded::memory:', SIGNAL_QUEUE: 'inline', ...env }));
  try {
    await runtime.engine.create(Buffer.alloc(32, 7), { utxos: Buffer.alloc(bytes, 1) });
    return 'stored';
  } catch (err) {
    return err instanceof EngineError ? err.code : String(err);
  } finally {
    await runtime.engine.close();
  }
}

test('default B = 20000: records up to 3 MiB are stored, larger ones are RECORD_TOO_BIG', async () => {
  expect(maxRecordSizeBytes(20000, MiB)).toBe(3 * MiB);
  expect(await writeRecordOf({}, 2.5 * MiB)).toBe('stored');
  expect(await writeRecordOf({}, 3 * MiB + 1)).toBe('RECORD_TOO_BIG');
});

test('the limit follows UTXO_BATCH_SIZE and MAX_TX_SIZE_IN_STORE', async () => {
  const env = { UTXO_BATCH_SIZE: '100', MAX_TX_SIZE_IN_STORE: String(512 * 1024) };
  expect(maxRecordSizeBytes(100, 512 * 1024)).toBe(MiB);
  expect(await writeRecordOf(env, 1.5 * MiB)).toBe('RECORD_TOO_BIG');
});
