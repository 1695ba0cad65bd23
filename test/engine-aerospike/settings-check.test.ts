/**
 * The settings check against a real cluster (AEROSPIKE_HOSTS, e.g. "127.0.0.1:3000,127.0.0.1:3010"; the namespace
 * AEROSPIKE_NAMESPACE, default "test"; AEROSPIKE_CLUSTER_SIZE, default the number of hosts): every value of
 * test/settings/settings-check.ts, each in an `npm start` of its own (client settings are process-wide), against
 * one fresh set; plus the set names of the issue (23 and 24 characters, the longest Aerospike accepts) and one
 * longer, refused at start-up. No native client is loaded in this worker (see real-cluster.test.ts on why that
 * matters): the cluster is reached only through the started processes.
 */
import { randomBytes } from 'crypto';
import { mapLimited } from '../../lib/domain/concurrency';
import { CE_MAX_CLUSTER_SIZE, MAX_SET_NAME_LENGTH } from '../../lib/domain/engine-limits';
import {
  booleanCases,
  documentedSettings,
  integerCases,
  judge,
  tryEnvInProcess,
  type SettingCase,
} from '../settings/settings-check';

const hosts = process.env.AEROSPIKE_HOSTS;
const AT_ONCE = 4;

if (!hosts) {
  const reason = 'AEROSPIKE_HOSTS is not set: the settings check against a real Aerospike is skipped';
  console.log(reason);
  test(`settings check on Aerospike: skipped (${reason})`, () => {
    expect(process.env.AEROSPIKE_HOSTS).toBeUndefined();
  });
} else {
  const namespace = process.env.AEROSPIKE_NAMESPACE ?? 'test';
  const clusterSize = process.env.AEROSPIKE_CLUSTER_SIZE ?? String(hosts.split(',').length);
  const tag = randomBytes(3).toString('hex');
  const store = (set: string) => `aerospike://${hosts}/${namespace}?set=${set}`;
  const base = { UTXO_STORE: store(`settings_${tag}`), AEROSPIKE_CLUSTER_SIZE: clusterSize };

  const setNames = [`mainnet_validator_utxo1`, `mainnet_validator_utxos1`, `s${tag}`.padEnd(MAX_SET_NAME_LENGTH, 'x')];
  const cases = (): SettingCase[] =>
    documentedSettings().flatMap((s): SettingCase[] => {
      if (s.name === 'UTXO_STORE') {
        return [
          ...setNames.map((set) => ({ name: s.name, value: store(set), expect: 'valid' as const })),
          { name: s.name, value: store(`s${tag}`.padEnd(MAX_SET_NAME_LENGTH + 1, 'x')), expect: 'invalid' },
        ];
      }
      if (s.name === 'EXTERNALIZE_ALL' || s.name === 'AEROSPIKE_STRONG_CONSISTENCY') return booleanCases(s.name);
      if (s.name === 'SPEND_ACK_GUARD') {
        return ['refuse', 'off'].map((value) => ({ name: s.name, value, expect: 'valid' as const }));
      }
      // the embedded run covers these; here the engine is Aerospike, the blobs a directory, the queue inline
      if (['BLOB_STORE', 'SIGNAL_QUEUE', 'PORT'].includes(s.name)) return [];
      const ints = integerCases(s, 1, 31) ?? [];
      // B is fixed for the life of a store (recorded on its first start): each value gets a set of its own
      if (s.name === 'UTXO_BATCH_SIZE') {
        return ints.map((c) => ({ ...c, with: { UTXO_STORE: store(`settings_${tag}_b${c.value}`.slice(0, 63)) } }));
      }
      // every size a Community cluster may have: those whose majority this cluster (as many nodes as hosts, unless
      // AEROSPIKE_CLUSTER_SIZE says otherwise) cannot hold must be refused at start-up naming the setting (decision
      // 0008; before, 7 started and every spend answered 503)
      if (s.name === 'AEROSPIKE_CLUSTER_SIZE') {
        const nodes = Number(clusterSize);
        return [
          ...Array.from({ length: CE_MAX_CLUSTER_SIZE + 1 }, (_, n) => ({
            name: s.name,
            value: String(n),
            expect: Math.floor(n / 2) + 1 > nodes && n > 0 ? ('invalid' as const) : ('valid' as const),
          })),
          ...['-1', String(CE_MAX_CLUSTER_SIZE + 1)].map((value) => ({
            name: s.name,
            value,
            expect: 'invalid' as const,
          })),
        ];
      }
      if (s.name === 'AEROSPIKE_MAX_COMMANDS_IN_PROCESS') {
        return ints.map((c) => ({ ...c, with: { AEROSPIKE_MAX_CONNS_PER_NODE: '10000' } }));
      }
      return ints;
    });

  test('each value starts `npm start` on the cluster within 30 s and serves every route family, or is refused naming it', async () => {
    const all = cases();
    const started = Date.now();
    const problems: string[] = [];
    const refusedValid: string[] = [];
    const slowest = { ms: 0, what: '' };
    await mapLimited(all, AT_ONCE, async (c) => {
      const outcome = await tryEnvInProcess({ ...base, [c.name]: c.value, ...c.with });
      const problem = judge(c, outcome);
      if (problem) problems.push(problem);
      else if (outcome.kind === 'refused' && c.expect === 'valid') refusedValid.push(outcome.message);
      if (outcome.kind === 'served' && outcome.startMs > slowest.ms) {
        Object.assign(slowest, { ms: outcome.startMs, what: `${c.name}=${c.value}` });
      }
    });
    console.log(
      `settings check on ${hosts} (namespace ${namespace}, AEROSPIKE_CLUSTER_SIZE ${clusterSize}): ${all.length} ` +
        `values in ${Date.now() - started} ms, slowest start ${slowest.ms} ms (${slowest.what}); documented values ` +
        `refused at start-up: ${refusedValid.length === 0 ? 'none' : refusedValid.join('; ')}; problems: ` +
        `${problems.length === 0 ? 'none' : `\n  ${problems.join('\n  ')}`}`,
    );
    expect(problems).toEqual([]);
  }, 1_800_000);
}
