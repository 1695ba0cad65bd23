/**
 * The drill's options (run.ts). The defaults are the issue's: 1,000,000 records, RF 2; a network prefix and subnet
 * of its own (drl, 10.21.0), so that it runs beside the partition harness (us19, 10.19.0).
 */

/** the emulator's bucket, and the key prefix the deployment's backups use (cdk/backup.ts BACKUP_PREFIX) */
export const DRILL_BUCKET = 'drill-backups';
export const DRILL_PREFIX = 'aerospike';

export interface DrillArgs {
  records: number;
  rf: number;
  /** spends a second, all load chains together */
  rate: number;
  chains: number;
  /** seed txs of 8 outputs each: the load's pool */
  seeds: number;
  /** load before the backup starts, and after it finished before the cluster is lost */
  warmupMs: number;
  tailMs: number;
  prefix: string;
  subnet: string;
  out: string;
}

export function parseDrillArgs(argv: string[]): DrillArgs {
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const int = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const v = get(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`--${name}: expected an integer from ${min} to ${max}, got "${v}"`);
    return n;
  };
  const prefix = get('prefix') ?? 'drl';
  if (!/^[a-z][a-z0-9]{0,5}$/.test(prefix)) throw new Error('--prefix: 1 to 6 lower-case letters and digits');
  const subnet = get('subnet') ?? '10.21.0';
  if (!/^\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(subnet)) throw new Error('--subnet: the first three octets, e.g. 10.21.0');
  return {
    records: int('records', 1_000_000, 0),
    rf: int('rf', 2, 1, 3),
    rate: int('rate', 150, 1),
    chains: int('chains', 16, 1),
    seeds: int('seeds', 32, 1),
    warmupMs: int('warmup-ms', 15_000, 0),
    tailMs: int('tail-ms', 10_000, 0),
    prefix,
    subnet,
    out: get('out') ?? `/tmp/${prefix}/results`,
  };
}
