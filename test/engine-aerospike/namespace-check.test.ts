/**
 * The namespace check at start-up (lib/engine/aerospike/namespace-check.ts) against a double of the client: a
 * namespace the settings cannot work with is refused naming the setting. Regression of the settings check on a
 * 2-node CE 8.1.2 cluster whose namespace had nsup-period 0: every cleanup pass answered "errors 8" (its range locks,
 * records with a TTL, refused with status 22) and deletes could not write their tombstones.
 */
import { ConfigError } from '../../lib/domain/config';
import { checkNamespace, parseNamespaceInfo } from '../../lib/engine/aerospike';
import { fakeClient } from './fake-client';

const answer = (facts: Record<string, string>) => ({
  host: {},
  info: `namespace/test\t${Object.entries(facts)
    .map(([k, v]) => `${k}=${v}`)
    .join(';')}\n`,
});
const SERVED = { 'nsup-period': '120', 'allow-ttl-without-nsup': 'false', 'strong-consistency': 'false' };

test('parseNamespaceInfo reads key=value pairs', () => {
  expect(parseNamespaceInfo('namespace/test\tobjects=0;nsup-period=0;allow-ttl-without-nsup=false\n')).toEqual(
    new Map([
      ['objects', '0'],
      ['nsup-period', '0'],
      ['allow-ttl-without-nsup', 'false'],
    ]),
  );
});

test('a namespace with its supervisor running (or TTLs allowed without it) is served', async () => {
  for (const facts of [SERVED, { ...SERVED, 'nsup-period': '0', 'allow-ttl-without-nsup': 'true' }]) {
    const { client, callsOf } = fakeClient({ infoAll: [answer(facts), answer(facts)] });
    await checkNamespace(client, 'test', { strongConsistency: false });
    expect(callsOf('infoAll')[0].args[0]).toBe('namespace/test');
  }
});

test('nsup-period 0 without allow-ttl-without-nsup is refused naming UTXO_STORE, on any node', async () => {
  const { client } = fakeClient({ infoAll: [answer(SERVED), answer({ ...SERVED, 'nsup-period': '0' })] });
  const err = await checkNamespace(client, 'test', { strongConsistency: false }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).variable).toBe('UTXO_STORE');
  expect((err as Error).message).toMatch(/^UTXO_STORE: namespace "test" has nsup-period 0 and allow-ttl-without-nsup/);
});

test('AEROSPIKE_STRONG_CONSISTENCY=true on a namespace not in strong-consistency mode is refused naming it', async () => {
  const { client } = fakeClient({ infoAll: [answer(SERVED)] });
  await expect(checkNamespace(client, 'test', { strongConsistency: true })).rejects.toMatchObject({
    variable: 'AEROSPIKE_STRONG_CONSISTENCY',
  });
  const sc = fakeClient({ infoAll: [answer({ ...SERVED, 'strong-consistency': 'true' })] });
  await checkNamespace(sc.client, 'test', { strongConsistency: true });
});

test('an unknown namespace is refused naming UTXO_STORE; a silent cluster is a DeadlineError', async () => {
  const missing = fakeClient({ infoAll: [{ host: {}, info: 'namespace/nope\tERROR::namespace not found\n' }] });
  await expect(checkNamespace(missing.client, 'nope', { strongConsistency: false })).rejects.toThrow(
    'UTXO_STORE: the cluster has no namespace "nope"',
  );
  const silent = fakeClient({ infoAll: () => new Promise(() => undefined) });
  await expect(checkNamespace(silent.client, 'test', { strongConsistency: false }, 30)).rejects.toMatchObject({
    name: 'DeadlineError',
    operation: 'aerospike read the configuration of namespace test',
  });
});
