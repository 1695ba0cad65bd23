import { execFileSync } from 'child_process';
import * as path from 'path';
import {
  aerospikeConfig,
  connectAerospike,
  DEFAULT_MAX_CONNS_PER_NODE,
  getSharedAerospikeClient,
  parseHosts,
} from '../../lib/engine/aerospike';
import { loadAerospike } from '../../lib/engine/aerospike/native';

describe('hosts and client configuration', () => {
  test('parseHosts', () => {
    expect(parseHosts('h1:3000,h2:3100')).toEqual([
      { addr: 'h1', port: 3000 },
      { addr: 'h2', port: 3100 },
    ]);
    expect(parseHosts(' 10.0.0.1 , [::1]:4000')).toEqual([
      { addr: '10.0.0.1', port: 3000 },
      { addr: '::1', port: 4000 },
    ]);
    expect(() => parseHosts('')).toThrow(/empty host list/);
    expect(() => parseHosts('h1:0')).toThrow(/bad port in "h1:0"/);
    expect(() => parseHosts('h1:3000,,h2')).toThrow(/bad host ""/);
    expect(() => parseHosts('h1:x')).toThrow(/bad host "h1:x"/);
  });

  test('aerospikeConfig: hosts, a small connection pool, timeouts, credentials', () => {
    const config = aerospikeConfig({
      hosts: 'a:3000',
      namespace: 'utxo',
      user: 'u',
      password: 'p',
      timeouts: { commandMs: 250, batchMs: 2000 },
    });
    expect(config.hosts).toEqual([{ addr: 'a', port: 3000 }]);
    expect(config.maxConnsPerNode).toBe(DEFAULT_MAX_CONNS_PER_NODE);
    expect(config.user).toBe('u');
    expect(config.password).toBe('p');
    const policies = config.policies as unknown as Record<string, { totalTimeout?: number }>;
    expect(policies.write.totalTimeout).toBe(250);
    expect(policies.apply.totalTimeout).toBe(250);
    expect(policies.batch.totalTimeout).toBe(2000);
    expect(aerospikeConfig({ hosts: 'a', namespace: 'n', maxConnsPerNode: 8 }).maxConnsPerNode).toBe(8);
    expect(aerospikeConfig({ hosts: 'a', namespace: 'n' }).user).toBeUndefined();
  });

  test('reads are retried by the client; writes, removes, UDF applies and batch writes are not', () => {
    const policies = aerospikeConfig({ hosts: 'a', namespace: 'n' }).policies as unknown as Record<
      string,
      { maxRetries?: number }
    >;
    expect(policies.read.maxRetries).toBe(2);
    expect(policies.batch.maxRetries).toBe(2);
    for (const type of ['write', 'remove', 'apply', 'operate', 'batchParentWrite']) {
      expect([type, policies[type].maxRetries]).toEqual([type, 0]);
    }
  });

  test('consistency policies are pinned: master only, reads consult every duplicate / linearize, writes commit all', () => {
    const policies = aerospikeConfig({ hosts: 'a', namespace: 'n' }).policies as unknown as Record<
      string,
      Record<string, unknown>
    >;
    const Aerospike = loadAerospike();
    for (const type of ['read', 'batch']) {
      expect([type, policies[type]]).toEqual([
        type,
        expect.objectContaining({
          replica: Aerospike.policy.replica.MASTER,
          readModeAP: Aerospike.policy.readModeAP.ALL,
        }),
      ]);
      // a Community server refuses LINEARIZE: only on a strong-consistency namespace
      expect(policies[type].readModeSC).toBeUndefined();
      const sc = aerospikeConfig({ hosts: 'a', namespace: 'n', strongConsistency: true }).policies as unknown as Record<
        string,
        Record<string, unknown>
      >;
      expect(sc[type].readModeSC).toBe(Aerospike.policy.readModeSC.LINEARIZE);
    }
    for (const type of ['write', 'remove', 'apply', 'operate', 'batchParentWrite']) {
      expect([type, policies[type]]).toEqual([
        type,
        expect.objectContaining({
          replica: Aerospike.policy.replica.MASTER,
          commitLevel: Aerospike.policy.commitLevel.ALL,
        }),
      ]);
    }
  });

  test('invalid options are INVALID before anything is loaded or connected', async () => {
    await expect(connectAerospike({ hosts: 'a', namespace: '' })).rejects.toMatchObject({ code: 'INVALID' });
    await expect(connectAerospike({ hosts: 'a', namespace: 'n', user: 'u' })).rejects.toThrow(/together/);
    await expect(getSharedAerospikeClient({ hosts: '', namespace: 'n' })).rejects.toMatchObject({ code: 'INVALID' });
  });
});

describe('lazy loading of the native client', () => {
  test('requiring lib/engine/aerospike does not load the aerospike module', () => {
    const root = path.resolve(__dirname, '../..');
    const script = [
      "require('./lib/engine/aerospike');",
      "const loaded = Object.keys(require.cache).filter((k) => k.includes('node_modules/aerospike/'));",
      'process.stdout.write(JSON.stringify(loaded));',
    ].join('\n');
    const out = execFileSync(process.execPath, ['-r', 'tsx/cjs', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual([]);
  });

  test(`the prebuilt binding for this Node (ABI ${process.versions.modules}) is present, and the one for Lambda's Node 22`, () => {
    const bindings = path.resolve(__dirname, '../../node_modules/aerospike/lib/binding');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require('fs') as typeof import('fs');
    const dirs = fs.readdirSync(bindings);
    expect(dirs).toContain(`node-v${process.versions.modules}-${process.platform}-${process.arch}`);
    expect(dirs).toContain('node-v127-linux-x64');
  });
});
