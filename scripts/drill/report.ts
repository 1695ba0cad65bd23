/**
 * The drill's figures: one row per run for the table `npm run drill` prints (and docs/reliability.md quotes), from
 * the measurements of run.ts. Per-million figures are the measured one scaled by the records the backup's manifest
 * counts (asbackup's own count), not by --records: the store's txs and the load's are in the backup too.
 */
import type { ReplayReport } from './replay';
import type { RecoveryPoint } from './recovery';
import type { StoreCheck } from './checks';

export interface DrillFigures {
  records: number;
  rf: number;
  /** the backup script, and asbackup's own part of it (its log's first and last lines) */
  backup: { ms: number; toolMs: number | null; bytes: number; files: number };
  /** empty nodes started until the cluster is stable, the restore script (verification + asrestore), asrestore's part */
  restore: { nodesMs: number; scriptMs: number; toolMs: number | null };
  rpo: RecoveryPoint;
  replay: ReplayReport;
  check: StoreCheck;
}

const perMillion = (value: number, records: number) => (records > 0 ? (value * 1_000_000) / records : NaN);
const seconds = (ms: number | null) => (ms === null ? '-' : (ms / 1000).toFixed(1));

/**
 * The ms between the first line of a tool's log matching `from` and the last matching `to`, from the tools' own
 * timestamps ("2026-11-29 10:22:19 GMT [INF] ...": whole seconds), or null when either is missing.
 */
export function toolMs(log: string, from: RegExp, to: RegExp): number | null {
  const stamp = (line: string | undefined): number | null => {
    const m = line === undefined ? null : /(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d) GMT/.exec(line);
    return m ? Date.parse(`${m[1]}T${m[2]}Z`) : null;
  };
  const lines = log.split('\n');
  const a = stamp(lines.find((l) => from.test(l)));
  const b = stamp([...lines].reverse().find((l) => to.test(l)));
  return a === null || b === null ? null : b - a;
}

export function figuresRow(f: DrillFigures): Record<string, string | number> {
  const h = f.check.history;
  const sinceWrites = f.rpo.since.creates + f.rpo.since.spends + f.rpo.since.blocks;
  return {
    records: f.records,
    RF: f.rf,
    'backup s (per M)': `${seconds(f.backup.ms)} (${seconds(perMillion(f.backup.ms, f.records))})`,
    'asbackup s': seconds(f.backup.toolMs),
    'backup MB (per M)': `${(f.backup.bytes / 1e6).toFixed(1)} (${(perMillion(f.backup.bytes, f.records) / 1e6).toFixed(1)})`,
    'restore s (per M)': `${seconds(f.restore.scriptMs)} (${seconds(perMillion(f.restore.scriptMs, f.records))})`,
    'asrestore s': seconds(f.restore.toolMs),
    'empty nodes s': seconds(f.restore.nodesMs),
    'RPO writes (c/s/b)': `${sinceWrites} (${f.rpo.since.creates}/${f.rpo.since.spends}/${f.rpo.since.blocks})`,
    'RPO s': seconds(f.rpo.lossMs - f.rpo.backupStartMs),
    'missing after restore': f.rpo.missing.creates + f.rpo.missing.spends + f.rpo.missing.blocks,
    'replay s': seconds(f.replay.ms),
    lost: h.creates.lost.length + h.lostSpends.length + h.mined.lost.length,
    'double-spent': h.doubleAcknowledged.length + f.check.verified.lost,
  };
}
