/**
 * The settings check on the embedded engine (what it shares with the Aerospike one: configuration, start-up, every
 * route family): see settings-check.ts. The real-cluster run is test/engine-aerospike/settings-check.test.ts.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { booleanCases, documentedSettings, integerCases, judge, tryEnv, type SettingCase } from './settings-check';

const SEED = 31;
const RANDOM_PER_SETTING = 2;
const dir = mkdtempSync(path.join(tmpdir(), 'settings-check-db-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Cases of the settings whose range is not an integer range, and why some values are not tried here. */
const OTHER_CASES: Record<string, SettingCase[]> = {
  UTXO_STORE: [
    { name: 'UTXO_STORE', value: 'embedded::memory:', expect: 'valid' },
    { name: 'UTXO_STORE', value: `embedded:${path.join(dir, 'utxo.db')}`, expect: 'valid' },
    { name: 'UTXO_STORE', value: 'embedded:', expect: 'invalid' },
    { name: 'UTXO_STORE', value: 'postgres://h/x', expect: 'invalid' },
    // refused before any connection: the names are checked against Aerospike's limits at start-up
    { name: 'UTXO_STORE', value: `aerospike://127.0.0.1:1/test?set=${'s'.repeat(64)}`, expect: 'invalid' },
    { name: 'UTXO_STORE', value: `aerospike://127.0.0.1:1/${'n'.repeat(32)}`, expect: 'invalid' },
    { name: 'UTXO_STORE', value: 'aerospike://127.0.0.1:1/test?set=a.b', expect: 'invalid' },
  ],
  BLOB_STORE: [
    { name: 'BLOB_STORE', value: `file:${path.join(dir, 'blobs')}`, expect: 'valid' },
    { name: 'BLOB_STORE', value: 'ftp://x', expect: 'invalid' },
    { name: 'BLOB_STORE', value: 's3://', expect: 'invalid' },
  ],
  SIGNAL_QUEUE: [
    { name: 'SIGNAL_QUEUE', value: 'inline', expect: 'valid' },
    { name: 'SIGNAL_QUEUE', value: 'kafka', expect: 'invalid' },
  ],
  EXTERNALIZE_ALL: booleanCases('EXTERNALIZE_ALL'),
  AEROSPIKE_STRONG_CONSISTENCY: booleanCases('AEROSPIKE_STRONG_CONSISTENCY'),
  SPEND_ACK_GUARD: [
    { name: 'SPEND_ACK_GUARD', value: 'refuse', expect: 'valid' },
    { name: 'SPEND_ACK_GUARD', value: 'off', expect: 'valid' },
    { name: 'SPEND_ACK_GUARD', value: 'sometimes', expect: 'invalid' },
  ],
};
/** Values not tried without AWS or a cluster, printed so that the gap is visible. */
const NOT_TRIED_HERE = [
  'BLOB_STORE=s3://… (needs S3: the deployed e2e, scripts/e2e)',
  'SIGNAL_QUEUE=<SQS URL> (needs SQS: the deployed e2e, scripts/e2e)',
  'UTXO_STORE=aerospike://… (needs a cluster: test/engine-aerospike/settings-check.test.ts with AEROSPIKE_HOSTS)',
];

export function embeddedCases(): SettingCase[] {
  return documentedSettings().flatMap((s) => {
    const cases = OTHER_CASES[s.name] ?? integerCases(s, RANDOM_PER_SETTING, SEED);
    if (!cases) throw new Error(`settings check: no cases for ${s.name} (range "${s.range}"): add them`);
    // a random port may be taken: PORT is tried at its boundaries (0 picks a free one; 65535) and one past them
    if (s.name === 'PORT') return cases.filter((c) => ['0', '65535', '-1', '65536'].includes(c.value));
    // its valid range is bounded by the pool: tried with the largest pool
    if (s.name === 'AEROSPIKE_MAX_COMMANDS_IN_PROCESS') {
      return cases.map((c) => ({ ...c, with: { AEROSPIKE_MAX_CONNS_PER_NODE: '10000' } }));
    }
    return cases;
  });
}

describe('settings check (embedded engine)', () => {
  test('every documented setting has cases', () => {
    const names = new Set(embeddedCases().map((c) => c.name));
    expect(documentedSettings().filter((s) => !names.has(s.name))).toEqual([]);
    expect(names.size).toBeGreaterThan(20);
  });

  test('each value starts the service and serves every route family, or is refused at start-up naming it', async () => {
    console.log(`settings check: not tried in npm test: ${NOT_TRIED_HERE.join('; ')}`);
    const started = Date.now();
    const problems: string[] = [];
    const refusedValid: string[] = [];
    const cases = embeddedCases();
    for (const c of cases) {
      const outcome = await tryEnv({ UTXO_STORE: 'embedded::memory:', [c.name]: c.value, ...c.with });
      const problem = judge(c, outcome);
      if (problem) problems.push(problem);
      else if (outcome.kind === 'refused' && c.expect === 'valid') refusedValid.push(outcome.message);
    }
    console.log(
      `settings check: ${cases.length} values of ${new Set(cases.map((c) => c.name)).size} settings in ` +
        `${Date.now() - started} ms; documented values refused at start-up (naming the setting): ` +
        `${refusedValid.length === 0 ? 'none' : refusedValid.join('; ')}`,
    );
    expect(problems).toEqual([]);
  }, 240_000);

  test('regression: a UTXO_BATCH_SIZE other than the store was created with is refused at start-up as a configuration error naming it', async () => {
    // found on a real cluster: `npm start` printed "start failed: InvalidArgumentError ..." with a stack trace
    const db = `embedded:${path.join(dir, 'batch-size.db')}`;
    expect(await tryEnv({ UTXO_STORE: db, UTXO_BATCH_SIZE: '1' })).toMatchObject({ kind: 'served' });
    expect(await tryEnv({ UTXO_STORE: db, UTXO_BATCH_SIZE: '2' })).toEqual({
      kind: 'refused',
      variable: 'UTXO_BATCH_SIZE',
      message: 'UTXO_BATCH_SIZE: this store was created with UTXO_BATCH_SIZE=1; it cannot run with 2',
    });
  });
});
