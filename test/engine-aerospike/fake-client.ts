/**
 * A recording double of the aerospike client for the engine's unit tests: each method records its call and answers
 * with `answers[method]` (a value or a function). Unless `answers.infoAll` is given, `sindex-list` lists the indexes
 * createIntegerIndex has made (readable), as a cluster of one node would.
 */
import type { Client } from 'aerospike';
import { AerospikeEngine, type AerospikeEngineOptions } from '../../lib/engine/aerospike';

export type Call = { method: string; args: unknown[] };

export function asError(code: number, message = `status ${code}`) {
  return Object.assign(new Error(message), { code, inDoubt: false });
}

/** The answer of a node to `sindex-list` that lists `names` (readable, in `state`). */
export function sindexList(names: string[], state = 'RW', set = 'txs'): { host: object; info: string } {
  const entries = names.map(
    (n) => `ns=utxo:indexname=${n}:set=${set}:bin=b:type=numeric:indextype=default:state=${state}`,
  );
  return { host: {}, info: `sindex-list:ns=utxo\t${entries.join(';')}` };
}

export function fakeClient(answers: Record<string, unknown> = {}) {
  const calls: Call[] = [];
  const created: string[] = [];
  const query = {
    where: jest.fn(),
    select: jest.fn(),
    queryState: undefined as unknown,
    results: jest.fn(async () => {
      const a = answers.queryResults as { records: unknown[]; state?: unknown } | Error;
      if (a instanceof Error) throw a;
      query.queryState = a.state;
      return a.records;
    }),
  };
  const handler: ProxyHandler<object> = {
    get(_t, method: string) {
      if (method === 'config') return answers.config;
      if (method === 'query') {
        return (...args: unknown[]) => {
          calls.push({ method, args });
          return query;
        };
      }
      return async (...args: unknown[]) => {
        calls.push({ method, args });
        if (method === 'infoAll' && !('infoAll' in answers) && String(args[0]).startsWith('sindex-list')) {
          return [sindexList(created)];
        }
        const a = answers[method];
        const v = typeof a === 'function' ? await (a as (...x: unknown[]) => unknown)(...args) : a;
        if (v instanceof Error) throw v;
        if (method === 'createIntegerIndex') created.push((args[0] as { index: string }).index);
        return v;
      };
    },
  };
  const client = new Proxy({}, handler) as unknown as Client;
  return { client, calls, query, callsOf: (m: string) => calls.filter((c) => c.method === m) };
}

export function engineWith(answers: Record<string, unknown> = {}, options: Partial<AerospikeEngineOptions> = {}) {
  const fake = fakeClient(answers);
  const engine = new AerospikeEngine({ client: fake.client, namespace: 'utxo', set: 'txs', jobPollMs: 1, ...options });
  return { engine, ...fake };
}
