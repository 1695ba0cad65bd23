/**
 * A blob store opened on its first use. The S3 store needs the AWS SDK's S3 client, whose code is a large part of
 * what a function compiles when it loads; the functions that never touch a blob (spend, unspend, setMined, getUtxo)
 * never open it, and their bundles leave the S3 client out (cdk/bundling.ts). An open that fails (a module that
 * cannot be loaded, a bad option) fails the call that needed the store, and the next call tries again.
 */
import type { BlobKind, BlobStore } from './port';

export class LazyBlobStore implements BlobStore {
  private opened: BlobStore | undefined;

  constructor(
    readonly kind: string,
    private readonly open: () => BlobStore,
  ) {}

  /** whether the store was opened (a call needed it) */
  get isOpen(): boolean {
    return this.opened !== undefined;
  }

  private store(): BlobStore {
    return (this.opened ??= this.open());
  }

  async put(txid: string, kind: BlobKind, data: Buffer): Promise<void> {
    return this.store().put(txid, kind, data);
  }

  async get(txid: string, kind: BlobKind): Promise<Buffer | null> {
    return this.store().get(txid, kind);
  }

  async exists(txid: string, kind: BlobKind): Promise<boolean> {
    return this.store().exists(txid, kind);
  }

  async delete(txid: string, kind: BlobKind): Promise<boolean> {
    return this.store().delete(txid, kind);
  }

  async setDeleteAtHeight(txid: string, kind: BlobKind, height: number | null): Promise<boolean> {
    return this.store().setDeleteAtHeight(txid, kind, height);
  }

  async getDeleteAtHeight(txid: string, kind: BlobKind): Promise<number | null> {
    return this.store().getDeleteAtHeight(txid, kind);
  }

  async ping(): Promise<void> {
    return this.store().ping();
  }
}
