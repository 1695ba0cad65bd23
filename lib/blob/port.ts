/**
 * BlobStore: transactions too large for a record (docs/records.md). Keys are
 * `<prefix>/<txid display hex>.tx` (EF bytes) or `.outputs` (see lib/domain outputs encoding).
 */
export type BlobKind = 'tx' | 'outputs';

export interface BlobStore {
  /** 'file' or 's3' */
  readonly kind: string;
  /**
   * Create-only write. An existing blob with identical bytes is success; different bytes -> BlobConflictError.
   */
  put(txid: string, kind: BlobKind, data: Buffer): Promise<void>;
  /** The blob's bytes, or null when missing. */
  get(txid: string, kind: BlobKind): Promise<Buffer | null>;
  exists(txid: string, kind: BlobKind): Promise<boolean>;
  /** Removes the blob; false if it did not exist. */
  delete(txid: string, kind: BlobKind): Promise<boolean>;
  /** Sets (a number) or removes (null) the `deleteAtHeight` tag/metadata of an existing blob; false if missing. */
  setDeleteAtHeight(txid: string, kind: BlobKind, height: number | null): Promise<boolean>;
  /** The blob's `deleteAtHeight` tag, null when absent or the blob is missing. */
  getDeleteAtHeight(txid: string, kind: BlobKind): Promise<number | null>;
  /** Liveness check for /v1/health. */
  ping(): Promise<void>;
}

export class BlobConflictError extends Error {
  constructor(readonly key: string) {
    super(`blob ${key} already exists with different content`);
    this.name = 'BlobConflictError';
  }
}
