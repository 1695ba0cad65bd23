/**
 * SQLite storage of the embedded engine: one row per record (bins encoded by codec.ts), the indexed integer bins
 * mirrored into columns with partial indexes, and the registered UDF modules.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { INDEXED_BINS, type IndexedBin } from '../../domain/bins';

export interface RecordRow {
  key: Buffer;
  gen: number;
  /** ms since the epoch, or null for never */
  expires_at: number | null;
  bins: Buffer;
}

export interface RangeRow extends RecordRow {
  v: number;
}

export type IndexValues = Record<IndexedBin, number | null>;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  key BLOB NOT NULL UNIQUE,
  gen INTEGER NOT NULL,
  expires_at INTEGER,
  bins BLOB NOT NULL,
  ${INDEXED_BINS.map((b) => `${b} INTEGER`).join(',\n  ')}
);
CREATE INDEX IF NOT EXISTS records_expires_at ON records(expires_at) WHERE expires_at IS NOT NULL;
${INDEXED_BINS.map((b) => `CREATE INDEX IF NOT EXISTS records_${b} ON records(${b}, key) WHERE ${b} IS NOT NULL;`).join('\n')}
CREATE TABLE IF NOT EXISTS udf_modules (name TEXT PRIMARY KEY, source TEXT NOT NULL);
`;

type Stmt<R = unknown> = Database.Statement<unknown[], R>;

/** Above every key (keys are at most a few dozen bytes). */
export const KEY_SPACE_END = Buffer.alloc(64, 0xff);

export class RecordsTable {
  readonly db: Database.Database;
  private readonly selectOne: Stmt<RecordRow>;
  private readonly upsertOne: Stmt;
  private readonly deleteOne: Stmt;
  private readonly purge: Stmt;
  private readonly selectModule: Stmt<{ source: string }>;
  private readonly insertModule: Stmt;
  private readonly rangeFirst = new Map<IndexedBin, Stmt<RangeRow>>();
  private readonly rangeNext = new Map<IndexedBin, Stmt<RangeRow>>();

  constructor(file: string) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    if (file !== ':memory:') {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
    }
    this.db.exec(SCHEMA);
    this.selectOne = this.db.prepare('SELECT key, gen, expires_at, bins FROM records WHERE key = ?');
    const cols = INDEXED_BINS.join(', ');
    const params = INDEXED_BINS.map(() => '?').join(', ');
    const sets = INDEXED_BINS.map((b) => `${b} = excluded.${b}`).join(', ');
    this.upsertOne = this.db.prepare(
      `INSERT INTO records (key, gen, expires_at, bins, ${cols}) VALUES (?, ?, ?, ?, ${params})
       ON CONFLICT(key) DO UPDATE SET gen = excluded.gen, expires_at = excluded.expires_at, bins = excluded.bins, ${sets}`,
    );
    this.deleteOne = this.db.prepare('DELETE FROM records WHERE key = ?');
    this.purge = this.db.prepare('DELETE FROM records WHERE expires_at IS NOT NULL AND expires_at <= ?');
    this.selectModule = this.db.prepare('SELECT source FROM udf_modules WHERE name = ?');
    this.insertModule = this.db.prepare('INSERT OR IGNORE INTO udf_modules (name, source) VALUES (?, ?)');
    for (const bin of INDEXED_BINS) {
      const base = `SELECT key, gen, expires_at, bins, ${bin} AS v FROM records
        WHERE ${bin} >= ? AND ${bin} <= ? AND key >= ? AND key < ? AND (expires_at IS NULL OR expires_at > ?)`;
      const tail = `ORDER BY ${bin}, key LIMIT ?`;
      this.rangeFirst.set(bin, this.db.prepare(`${base} ${tail}`));
      this.rangeNext.set(bin, this.db.prepare(`${base} AND (${bin} > ? OR (${bin} = ? AND key > ?)) ${tail}`));
    }
  }

  /** The row of a key, expired rows included (callers decide visibility with their clock). */
  get(key: Buffer): RecordRow | undefined {
    return this.selectOne.get(key);
  }

  put(row: RecordRow, index: IndexValues): void {
    this.upsertOne.run(row.key, row.gen, row.expires_at, row.bins, ...INDEXED_BINS.map((b) => index[b]));
  }

  delete(key: Buffer): boolean {
    return this.deleteOne.run(key).changes > 0;
  }

  purgeExpired(now: number): number {
    return this.purge.run(now).changes;
  }

  range(
    bin: IndexedBin,
    min: number,
    max: number,
    now: number,
    limit: number,
    after?: { v: number; key: Buffer },
    keys: { from: Buffer; to: Buffer } = { from: Buffer.alloc(0), to: KEY_SPACE_END },
  ): RangeRow[] {
    if (!after) return this.rangeFirst.get(bin)!.all(min, max, keys.from, keys.to, now, limit);
    return this.rangeNext.get(bin)!.all(min, max, keys.from, keys.to, now, after.v, after.v, after.key, limit);
  }

  moduleSource(name: string): string | undefined {
    return this.selectModule.get(name)?.source;
  }

  /** Stores a module unless one of that name exists; true when stored. */
  addModule(name: string, source: string): boolean {
    return this.insertModule.run(name, source).changes > 0;
  }

  close(): void {
    this.db.close();
  }
}
