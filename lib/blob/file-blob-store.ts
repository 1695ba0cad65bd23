/**
 * BlobStore on the local filesystem (docs/records.md): `<dir>/<prefix>/<txid>.tx|.outputs`.
 *
 * - put is create-only and atomic: the bytes go to a temporary file in the same directory, which is fsynced and then
 *   hard-linked to the final name. link(2) fails with EEXIST when the name exists, so a concurrent writer can never
 *   be overwritten and a reader never sees a partial blob; the existing bytes are then compared (identical =
 *   success, different = BlobConflictError). Before put succeeds the directory is fsynced, so an acknowledged blob
 *   survives a crash.
 * - the deleteAtHeight tag lives in a sidecar file `<blob>.dah` holding the height in decimal, replaced atomically
 *   (temp file + rename + directory fsync). delete removes the sidecar before the blob, so a crash in between never
 *   leaves a stale tag that a later blob of the same name would inherit.
 */
import { randomBytes } from 'crypto';
import { constants as fsConstants, promises as fs } from 'fs';
import * as path from 'path';
import { BlobStoreError } from './errors';
import { blobName, formatDeleteAtHeight, normalizePrefix, parseDeleteAtHeight } from './keys';
import { BlobConflictError, type BlobKind, type BlobStore } from './port';

export interface FileBlobStoreOptions {
  /** root directory; created on first write */
  dir: string;
  /** optional sub-directory below dir */
  prefix?: string;
}

const DAH_SUFFIX = '.dah';
const LINK_ATTEMPTS = 3;

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

export class FileBlobStore implements BlobStore {
  readonly kind = 'file';
  private readonly root: string;
  private readonly base: string;

  constructor(options: FileBlobStoreOptions) {
    if (!options || typeof options.dir !== 'string' || options.dir === '') {
      throw new TypeError('FileBlobStore: options.dir must be a non-empty path');
    }
    this.root = path.resolve(options.dir);
    const prefix = normalizePrefix(options.prefix);
    this.base = prefix ? path.join(this.root, ...prefix.split('/')) : this.root;
  }

  /** Absolute path of a blob. */
  pathOf(txid: string, kind: BlobKind): string {
    return path.join(this.base, blobName(txid, kind));
  }

  async put(txid: string, kind: BlobKind, data: Buffer): Promise<void> {
    const file = this.pathOf(txid, kind);
    let existing = await this.read(file, 'put');
    if (!existing) {
      const tmp = await this.writeTemp(file, data, 'put');
      try {
        for (let attempt = 1; !existing; attempt++) {
          try {
            await fs.link(tmp, file);
            return await this.syncDir(file, 'put');
          } catch (err) {
            if (err instanceof BlobStoreError) throw err;
            if (errorCode(err) !== 'EEXIST') throw new BlobStoreError('put', file, err);
            existing = await this.read(file, 'put');
            // created and deleted again before it could be read: try the link again
            if (!existing && attempt >= LINK_ATTEMPTS) throw new BlobStoreError('put', file, err);
          }
        }
      } finally {
        await fs.rm(tmp, { force: true });
      }
    }
    this.compare(existing, data, file);
    // identical bytes found: the put that linked them may have crashed before its directory fsync
    await this.syncDir(file, 'put');
  }

  async get(txid: string, kind: BlobKind): Promise<Buffer | null> {
    return this.read(this.pathOf(txid, kind), 'get');
  }

  async exists(txid: string, kind: BlobKind): Promise<boolean> {
    return this.isFile(this.pathOf(txid, kind), 'exists');
  }

  async delete(txid: string, kind: BlobKind): Promise<boolean> {
    const file = this.pathOf(txid, kind);
    await this.unlink(file + DAH_SUFFIX, 'delete');
    return this.unlink(file, 'delete');
  }

  async setDeleteAtHeight(txid: string, kind: BlobKind, height: number | null): Promise<boolean> {
    const file = this.pathOf(txid, kind);
    const text = height === null ? null : formatDeleteAtHeight(height);
    if (!(await this.isFile(file, 'setDeleteAtHeight'))) return false;
    const sidecar = file + DAH_SUFFIX;
    if (text === null) {
      await this.unlink(sidecar, 'setDeleteAtHeight');
    } else {
      const tmp = await this.writeTemp(sidecar, Buffer.from(text), 'setDeleteAtHeight');
      try {
        await fs.rename(tmp, sidecar);
      } catch (err) {
        await fs.rm(tmp, { force: true });
        throw new BlobStoreError('setDeleteAtHeight', file, err);
      }
      await this.syncDir(sidecar, 'setDeleteAtHeight');
    }
    return true;
  }

  async getDeleteAtHeight(txid: string, kind: BlobKind): Promise<number | null> {
    const file = this.pathOf(txid, kind);
    if (!(await this.isFile(file, 'getDeleteAtHeight'))) return null;
    const text = await this.read(file + DAH_SUFFIX, 'getDeleteAtHeight');
    return text ? parseDeleteAtHeight(text.toString('utf8')) : null;
  }

  /** The root directory exists (created if needed) and is readable and writable. */
  async ping(): Promise<void> {
    try {
      await fs.mkdir(this.base, { recursive: true });
      await fs.access(this.base, fsConstants.R_OK | fsConstants.W_OK);
    } catch (err) {
      throw new BlobStoreError('ping', this.base, err);
    }
  }

  private compare(existing: Buffer, data: Buffer, file: string): void {
    if (!existing.equals(data)) throw new BlobConflictError(file);
  }

  private async read(file: string, operation: string): Promise<Buffer | null> {
    try {
      return await fs.readFile(file);
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return null;
      throw new BlobStoreError(operation, file, err);
    }
  }

  private async isFile(file: string, operation: string): Promise<boolean> {
    try {
      return (await fs.stat(file)).isFile();
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return false;
      throw new BlobStoreError(operation, file, err);
    }
  }

  private async unlink(file: string, operation: string): Promise<boolean> {
    try {
      await fs.unlink(file);
      return true;
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return false;
      throw new BlobStoreError(operation, file, err);
    }
  }

  /** fsyncs the directory holding `file`, making a link or rename of it durable. */
  private async syncDir(file: string, operation: string): Promise<void> {
    try {
      const handle = await fs.open(path.dirname(file), 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (err) {
      throw new BlobStoreError(operation, file, err);
    }
  }

  /** Writes and fsyncs `<file>.<random>.tmp` in the target's directory; returns its path. */
  private async writeTemp(file: string, data: Buffer, operation: string): Promise<string> {
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await fs.mkdir(path.dirname(file), { recursive: true });
      const handle = await fs.open(tmp, 'wx');
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      return tmp;
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw new BlobStoreError(operation, file, err);
    }
  }
}
