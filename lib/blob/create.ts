/**
 * BLOB_STORE (docs/settings.md): `file:<dir>` (relative to the working directory, or `file:///abs/dir`) or
 * `s3://<bucket>/<prefix>`.
 */
import * as path from 'path';
import { fileURLToPath } from 'url';
import { S3Client } from '@aws-sdk/client-s3';
import { InvalidArgumentError } from '../domain/errors';
import { FileBlobStore } from './file-blob-store';
import type { BlobStore } from './port';
import { S3BlobStore } from './s3-blob-store';

export interface CreateBlobStoreOptions {
  /** S3 client to use for s3:// URLs (default: a new S3Client with the default credential chain and region) */
  s3Client?: S3Client;
}

const FIELD = 'BLOB_STORE';
const EXPECTED = 'expected file:<dir> or s3://<bucket>/<prefix>';
// S3 bucket naming rules: 3-63 chars, lowercase letters, digits, dots and hyphens, starting and ending alphanumeric.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function invalid(url: string, problem: string): InvalidArgumentError {
  return new InvalidArgumentError(FIELD, `${JSON.stringify(url)}: ${problem} (${EXPECTED})`);
}

export function createBlobStore(url: string, options: CreateBlobStoreOptions = {}): BlobStore {
  if (typeof url !== 'string' || url.trim() === '') throw invalid(String(url), 'empty');
  if (url.startsWith('file:')) return new FileBlobStore({ dir: fileDir(url) });
  if (url.startsWith('s3://')) {
    const rest = url.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    const prefix = slash < 0 ? '' : rest.slice(slash + 1);
    if (!BUCKET.test(bucket)) throw invalid(url, `bad bucket name ${JSON.stringify(bucket)}`);
    if (/[?#]/.test(prefix)) throw invalid(url, 'the prefix must not contain "?" or "#"');
    return new S3BlobStore({ client: options.s3Client ?? new S3Client({}), bucket, prefix });
  }
  throw invalid(url, 'unknown scheme');
}

function fileDir(url: string): string {
  if (url.startsWith('file://')) {
    try {
      return fileURLToPath(url);
    } catch (err) {
      throw invalid(url, (err as Error).message);
    }
  }
  const dir = url.slice('file:'.length);
  if (dir === '') throw invalid(url, 'missing directory');
  return path.resolve(dir);
}
