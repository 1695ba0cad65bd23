/**
 * The CDK context check: every context key (`-c key=value`, CONTEXT_KEYS, docs/deploy.md) at its boundaries
 * synthesizes, and one past them (or a value of the wrong type) stops synthesis with a message naming the key.
 * Validation (cdk/config.ts loadConfig) is fast and runs for every key; synthesis is slow, so it runs for three
 * representative contexts: every numeric key at its smallest valid value, every one at its largest, and the longest
 * set and namespace names Aerospike accepts.
 */
import { CONTEXT_KEYS, ConfigurationError, loadConfig } from '../../cdk/config';
import { MAX_NAMESPACE_LENGTH, MAX_SET_NAME_LENGTH } from '../../lib/domain/engine-limits';
import { synth } from './helpers';

type Context = Record<string, unknown>;
const source = (context: Context) => ({ tryGetContext: (key: string) => context[key] });
const valid = (context: Context): boolean => {
  try {
    loadConfig(source(context));
    return true;
  } catch (err) {
    if (err instanceof ConfigurationError) return false;
    throw err;
  }
};
const refusal = (context: Context): string => {
  try {
    loadConfig(source(context));
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
};

/** The value each key has in the default configuration (the type its context value is coerced to). */
function defaultOf(key: string): unknown {
  const config = loadConfig(source({})) as unknown as Record<string, unknown>;
  return CONTEXT_KEYS[key as keyof typeof CONTEXT_KEYS]
    .split('.')
    .reduce<unknown>((o, p) => (o as Record<string, unknown> | undefined)?.[p], config);
}

const LIMIT = 2 ** 31;
/** The smallest or largest valid value of an integer key, found by bisection from its default. */
function boundary(key: string, from: number, direction: -1 | 1): number {
  let good = from;
  let bad = direction < 0 ? -LIMIT : LIMIT;
  if (valid({ [key]: String(bad) })) return bad;
  while (Math.abs(bad - good) > 1) {
    const mid = Math.trunc((good + bad) / 2);
    if (valid({ [key]: String(mid) })) good = mid;
    else bad = mid;
  }
  return good;
}

// keys whose valid values are not an interval around the default, or that interact: checked on their own below
const NOT_AN_INTERVAL = new Set([
  'logRetentionDays',
  'natGateways',
  'signalMaxConcurrency',
  'apiErrorRateAlarmPercent',
]);
const integerKeys = Object.keys(CONTEXT_KEYS).filter(
  (k) => typeof defaultOf(k) === 'number' && Number.isInteger(defaultOf(k)) && !NOT_AN_INTERVAL.has(k),
);
const bounds = new Map(
  integerKeys.map((k) => [k, [boundary(k, defaultOf(k) as number, -1), boundary(k, defaultOf(k) as number, 1)]]),
);

describe('CDK context values (validation)', () => {
  /** Keys whose valid values depend on each other: a refusal names one of its group. */
  const GROUPS = [
    ['maxAzs', 'nodeCount', 'replicationFactor'],
    ['protoFdMax', 'clientMaxConnsPerNode', 'reservedConcurrency'],
  ];
  test.each(integerKeys)('%s: one past each boundary stops synthesis naming it', (key) => {
    const [min, max] = bounds.get(key)!;
    const names = GROUPS.find((g) => g.includes(key)) ?? [key];
    for (const v of [min - 1, max + 1, 'x']) {
      const message = refusal({ [key]: String(v) });
      expect(message).toMatch(/^cdk context "[^"]+": /);
      expect(names.some((n) => message.includes(n))).toBe(true);
    }
  });

  test.each(Object.keys(CONTEXT_KEYS).filter((k) => typeof defaultOf(k) === 'boolean'))(
    '%s: true/false/1/0/yes/no are accepted, anything else stops synthesis naming it',
    (key) => {
      for (const v of ['true', 'false', '1', '0', 'yes', 'no']) expect(refusal({ [key]: v })).toBe('accepted');
      expect(refusal({ [key]: 'maybe' })).toMatch(new RegExp(`^cdk context "${key}": `));
    },
  );

  test('aerospikeSet and aerospikeNamespace: Aerospike limits, named (a longer name would only fail on the nodes)', () => {
    expect(refusal({ aerospikeSet: 's'.repeat(MAX_SET_NAME_LENGTH) })).toBe('accepted');
    expect(refusal({ aerospikeSet: 's'.repeat(MAX_SET_NAME_LENGTH + 1) })).toBe(
      'cdk context "aerospikeSet": the set name "' +
        's'.repeat(MAX_SET_NAME_LENGTH + 1) +
        '" has 64 characters; Aerospike allows at most 63',
    );
    expect(refusal({ aerospikeNamespace: 'n'.repeat(MAX_NAMESPACE_LENGTH) })).toBe('accepted');
    // regression: a 32-character namespace was accepted, and the nodes' aerospike.conf refused it at boot
    expect(refusal({ aerospikeNamespace: 'n'.repeat(MAX_NAMESPACE_LENGTH + 1) })).toMatch(
      /^cdk context "aerospikeNamespace": the namespace "n{32}" has 32 characters; Aerospike allows at most 31$/,
    );
  });

  test('the boundaries found are the documented ones for a few keys (the bisection is sound)', () => {
    expect(bounds.get('cleanupScheduleMinutes')).toEqual([1, 1440]);
    // nodeCount's range (1 to 8) depends on the AZs and the replication factor: with the default 3 copies over 3 AZs
    // an AZ may hold at most 2 nodes
    expect(bounds.get('nodeCount')).toEqual([1, 6]);
    expect(refusal({ nodeCount: '8', replicationFactor: '4' })).toBe('accepted');
    expect(refusal({ nodeCount: '9', replicationFactor: '4' })).toMatch(/^cdk context "nodeCount": /);
    expect(bounds.get('signalBatchSize')).toEqual([1, 10]);
    expect(bounds.get('cleanupRetryAttempts')).toEqual([0, 185]);
    // AEROSPIKE_MAX_CONNS_PER_NODE's range (issue 31: 1 to 4 failed every function's start-up inside the client)
    expect(bounds.get('clientMaxConnsPerNode')?.[0]).toBe(5);
  });
});

describe('CDK context values (synthesis)', () => {
  /** Every key at one end, skipping those that conflict with the keys already set (named in the output). */
  function extreme(end: 0 | 1): { context: Context; skipped: string[] } {
    const context: Context = {};
    const skipped: string[] = [];
    for (const key of integerKeys) {
      const v = String(bounds.get(key)![end]);
      if (valid({ ...context, [key]: v })) context[key] = v;
      else skipped.push(`${key}=${v}: ${refusal({ ...context, [key]: v })}`);
    }
    return { context, skipped };
  }

  test.each([
    ['smallest', 0],
    ['largest', 1],
  ] as const)(
    'every integer key at its %s valid value synthesizes',
    (_, end) => {
      const { context, skipped } = extreme(end);
      console.log(
        `context check (${end ? 'largest' : 'smallest'}): ${JSON.stringify(context)}; not combinable: ${skipped.join('; ') || 'none'}`,
      );
      expect(Object.keys(context).length).toBeGreaterThan(integerKeys.length / 2);
      const { template, clusterTemplate } = synth(context);
      expect(Object.keys(template.toJSON().Resources).length).toBeGreaterThan(10);
      expect(Object.keys(clusterTemplate.toJSON().Resources).length).toBeGreaterThan(10);
    },
    120_000,
  );

  test('regression: a B and an in-record tx size too large together are refused by validation, naming utxoBatchSize', () => {
    // each within its own range, together over Aerospike's 8 MiB records: synthesis used to fail half-way through
    expect(refusal({ utxoBatchSize: '100000', maxTxSizeInStore: String(4 * 1024 * 1024) })).toMatch(
      /^cdk context "utxoBatchSize": records of up to \d+ bytes exceed Aerospike's 8 MiB max-record-size/,
    );
  });

  test('regression: cleanupMaxEventAgeSeconds above the 6 h async-invoke limit of Lambda is refused naming it', () => {
    // validation allowed 86400 (EventBridge's limit) and synthesis failed in configureAsyncInvoke
    expect(bounds.get('cleanupMaxEventAgeSeconds')).toEqual([60, 21600]);
    expect(refusal({ cleanupMaxEventAgeSeconds: '21601' })).toMatch(/^cdk context "cleanupMaxEventAgeSeconds": /);
  });

  test('the longest set and namespace names synthesize', () => {
    const set = 's'.repeat(MAX_SET_NAME_LENGTH);
    const { template } = synth({ aerospikeSet: set, aerospikeNamespace: 'n'.repeat(MAX_NAMESPACE_LENGTH) });
    expect(JSON.stringify(template.toJSON())).toContain(`?set=${set}`);
  }, 120_000);
});
