/**
 * The filler: N other records (RECORD_BYTES each) in the namespace, in a set of their own, written before the
 * nemeses so that migrations after a node change take as long as they would on a real store (the records migrate
 * with the store's own). Written straight through an aerospike client, CONCURRENCY puts in flight, in a process of
 * its own (the client's global command queue is set up once per process, by the store's runtime in the harness):
 * `tsx scripts/partition/filler.ts <hosts> <namespace> <records> [random]` (random: random bytes, not a constant
 * body). A put refused by stop-writes (status 8: on a shared machine the system memory of other processes counts,
 * stop-writes-sys-memory-pct), or failed while the cluster
 * re-forms (partition unavailable, 11; timeout, 9: a node its watchdog killed on a loaded machine, seen 2026-11-26
 * 06:10 UTC), is retried for up to RETRY_WAIT_MS (the put is idempotent).
 */
import { randomBytes } from 'crypto';
import { loadAerospike } from '../../lib/engine/aerospike/native';

export const FILLER_SET = 'filler';
export const RECORD_BYTES = 500;
const CONCURRENCY = 128;
/** stop-writes (storage or system memory), a timeout, a partition without a master while the cluster re-forms */
const RETRIED = new Set([8, 9, 11]);
const RETRY_WAIT_MS = 300_000;

/** Whether a failed put is sent again: its status is one of RETRIED and the first failure is under RETRY_WAIT_MS old. */
export function retriedPut(err: unknown, firstFailureAt: number, now: number): boolean {
  const code = (err as { code?: number } | null)?.code;
  return code !== undefined && RETRIED.has(code) && now - firstFailureAt <= RETRY_WAIT_MS;
}

export async function fill(
  hosts: string,
  namespace: string,
  records: number,
  log: (line: string) => void,
  /** random bytes instead of a constant body: records that compress as little as a store's (the drill's backups) */
  o: { random?: boolean } = {},
): Promise<{ written: number; ms: number }> {
  const Aerospike = loadAerospike();
  const client = await Aerospike.connect({
    hosts,
    maxConnsPerNode: 2 * CONCURRENCY,
    policies: { write: new Aerospike.WritePolicy({ totalTimeout: 10_000, maxRetries: 3 }) },
  });
  const started = Date.now();
  const body = Buffer.alloc(RECORD_BYTES - 16, 7);
  let next = 0;
  let written = 0;
  let lastLog = started;
  try {
    const worker = async () => {
      while (next < records) {
        const i = next++;
        for (const firstRefusal = Date.now(); ;) {
          try {
            const b = o.random ? randomBytes(RECORD_BYTES - 16) : body;
            await client.put(new Aerospike.Key(namespace, FILLER_SET, i), { i, b });
            break;
          } catch (err) {
            if (!retriedPut(err, firstRefusal, Date.now())) throw err;
            if (Date.now() - lastLog > 10_000) {
              lastLog = Date.now();
              log(`filler: ${(err as Error).message} (status ${(err as { code: number }).code}), retrying`);
            }
            await new Promise((r) => setTimeout(r, 1000));
          }
        }
        written++;
        if (Date.now() - lastLog > 10_000) {
          lastLog = Date.now();
          log(`filler: ${written} of ${records} records`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, records) }, worker));
  } finally {
    client.close();
  }
  return { written, ms: Date.now() - started };
}

if (require.main === module) {
  const [hosts, namespace, records, body] = process.argv.slice(2);
  const log = (l: string) => console.log(`${new Date().toISOString().slice(11, 23)} ${l}`);
  fill(hosts, namespace, Number(records), log, { random: body === 'random' }).then(
    (r) => {
      console.log(JSON.stringify(r));
      process.exit(0);
    },
    (err: unknown) => {
      console.error('filler failed:', err);
      process.exit(1);
    },
  );
}
