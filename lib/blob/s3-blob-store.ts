/**
 * BlobStore on S3 (docs/records.md): objects `<prefix>/<txid>.tx|.outputs` in one bucket, the delete-at-height as
 * the object tag `deleteAtHeight`.
 *
 * Create-only put: HeadObject first (a retried create of a large tx does not upload it again, and an existing
 * object of another size is a conflict without downloading it), then PutObject with `If-None-Match: *`, which S3
 * evaluates atomically. A 412 (someone created it in between) or an existing object of the same size is resolved by
 * comparing the bytes: identical = success, different = BlobConflictError, deleted meanwhile = the create is tried
 * again. A 409 ConditionalRequestConflict (a concurrent conditional upload) is retried. The tests' S3 (fauxqs, with
 * If-None-Match and tagging served by scripts/e2e/s3-emulator-gaps.ts) answers the 412; the 409 path, which no
 * emulator produces, is unit-tested with a mocked client.
 *
 * Tags: setDeleteAtHeight reads the object's tags and writes them back with `deleteAtHeight` replaced or removed
 * (other tags are kept). Removal writes the remaining tag set with PutObjectTagging rather than calling
 * DeleteObjectTagging, which would also drop unrelated tags.
 */
import {
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  DeleteObjectCommand,
  type S3Client,
  type Tag,
} from '@aws-sdk/client-s3';
import { BlobStoreError } from './errors';
import { blobName, formatDeleteAtHeight, normalizePrefix, parseDeleteAtHeight } from './keys';
import { BlobConflictError, type BlobKind, type BlobStore } from './port';

export interface S3BlobStoreOptions {
  client: S3Client;
  bucket: string;
  /** key prefix without trailing slash ('' or omitted for none) */
  prefix?: string;
}

export const DAH_TAG = 'deleteAtHeight';
const PUT_ATTEMPTS = 3;
const GONE = Symbol('gone');

interface AwsErrorShape {
  name?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number };
}

function httpStatus(err: unknown): number | undefined {
  return (err as AwsErrorShape | undefined)?.$metadata?.httpStatusCode;
}

function errorName(err: unknown): string | undefined {
  const e = err as AwsErrorShape | undefined;
  return e?.name ?? e?.Code;
}

/** The object is missing. A missing bucket is a 404 too, but an error (NoSuchBucket), not a missing blob. */
function isNotFound(err: unknown): boolean {
  const name = errorName(err);
  if (name === 'NoSuchBucket') return false;
  return name === 'NoSuchKey' || name === 'NotFound' || httpStatus(err) === 404;
}

function isPreconditionFailed(err: unknown): boolean {
  return errorName(err) === 'PreconditionFailed' || httpStatus(err) === 412;
}

function isConditionalConflict(err: unknown): boolean {
  return errorName(err) === 'ConditionalRequestConflict' || httpStatus(err) === 409;
}

export class S3BlobStore implements BlobStore {
  readonly kind = 's3';
  readonly bucket: string;
  readonly prefix: string;
  private readonly client: S3Client;

  constructor(options: S3BlobStoreOptions) {
    if (!options?.client) throw new TypeError('S3BlobStore: options.client is required');
    if (typeof options.bucket !== 'string' || options.bucket === '') {
      throw new TypeError('S3BlobStore: options.bucket must be a non-empty bucket name');
    }
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = normalizePrefix(options.prefix);
  }

  /** The object key of a blob. */
  keyOf(txid: string, kind: BlobKind): string {
    const name = blobName(txid, kind);
    return this.prefix ? `${this.prefix}/${name}` : name;
  }

  async put(txid: string, kind: BlobKind, data: Buffer): Promise<void> {
    const key = this.keyOf(txid, kind);
    for (let attempt = 1; ; attempt++) {
      const retry = attempt < PUT_ATTEMPTS;
      const size = await this.headSize(key, 'put');
      if (size !== null) {
        if ((await this.compareExisting(key, size, data)) !== GONE) return;
        // deleted before its bytes were read: gone, not a conflict; try the create again
        if (retry) continue;
        throw new BlobStoreError('put', this.location(key), 'the existing object was deleted while it was compared');
      }
      try {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: data,
            ContentLength: data.length,
            ContentType: 'application/octet-stream',
            IfNoneMatch: '*',
          }),
        );
        return;
      } catch (err) {
        if (isPreconditionFailed(err)) {
          // someone created it in between: compare (and if it is gone again, try the create again)
          const raced = await this.headSize(key, 'put');
          if (raced !== null && (await this.compareExisting(key, raced, data)) !== GONE) return;
          if (retry) continue;
        } else if (isConditionalConflict(err) && retry) {
          continue;
        }
        throw new BlobStoreError('put', this.location(key), err);
      }
    }
  }

  async get(txid: string, kind: BlobKind): Promise<Buffer | null> {
    return this.read(this.keyOf(txid, kind), 'get');
  }

  async exists(txid: string, kind: BlobKind): Promise<boolean> {
    return (await this.headSize(this.keyOf(txid, kind), 'exists', true)) !== null;
  }

  async delete(txid: string, kind: BlobKind): Promise<boolean> {
    const key = this.keyOf(txid, kind);
    // S3 DeleteObject succeeds on a missing key, so existence is checked first to report false.
    if ((await this.headSize(key, 'delete', true)) === null) return false;
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw new BlobStoreError('delete', this.location(key), err);
    }
  }

  async setDeleteAtHeight(txid: string, kind: BlobKind, height: number | null): Promise<boolean> {
    const key = this.keyOf(txid, kind);
    const value = height === null ? null : formatDeleteAtHeight(height);
    const tags = await this.readTags(key, 'setDeleteAtHeight');
    if (tags === null) return false;
    const others = tags.filter((t) => t.Key !== DAH_TAG);
    const current = tags.find((t) => t.Key === DAH_TAG)?.Value ?? null;
    if (current === value) return true;
    const TagSet = value === null ? others : [...others, { Key: DAH_TAG, Value: value }];
    try {
      await this.client.send(new PutObjectTaggingCommand({ Bucket: this.bucket, Key: key, Tagging: { TagSet } }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw new BlobStoreError('setDeleteAtHeight', this.location(key), err);
    }
  }

  async getDeleteAtHeight(txid: string, kind: BlobKind): Promise<number | null> {
    const tags = await this.readTags(this.keyOf(txid, kind), 'getDeleteAtHeight');
    return parseDeleteAtHeight(tags?.find((t) => t.Key === DAH_TAG)?.Value);
  }

  /** The bucket exists and is reachable with these credentials. */
  async ping(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      throw new BlobStoreError('ping', `s3://${this.bucket}`, err);
    }
  }

  private location(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  /** Compares an existing object with data: identical -> undefined, different -> BlobConflictError, deleted -> GONE. */
  private async compareExisting(key: string, size: number | undefined, data: Buffer): Promise<typeof GONE | void> {
    if (size !== undefined && size !== data.length) throw new BlobConflictError(this.location(key));
    const existing = await this.read(key, 'put');
    if (existing === null) return GONE;
    if (!existing.equals(data)) throw new BlobConflictError(this.location(key));
  }

  /**
   * The object's size (undefined when S3 did not say), or null when it does not exist. A HeadObject 404 has no body,
   * so a missing bucket looks like a missing object: with confirmBucket, a 404 is checked with HeadBucket (put needs
   * no check: its PutObject fails with NoSuchBucket).
   */
  private async headSize(key: string, operation: string, confirmBucket = false): Promise<number | undefined | null> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return res.ContentLength;
    } catch (err) {
      if (!isNotFound(err)) throw new BlobStoreError(operation, this.location(key), err);
    }
    if (confirmBucket) {
      try {
        await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      } catch (err) {
        throw new BlobStoreError(operation, this.location(key), err);
      }
    }
    return null;
  }

  private async read(key: string, operation: string): Promise<Buffer | null> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!res.Body) return Buffer.alloc(0);
      return Buffer.from(await res.Body.transformToByteArray());
    } catch (err) {
      if (isNotFound(err)) return null;
      throw new BlobStoreError(operation, this.location(key), err);
    }
  }

  private async readTags(key: string, operation: string): Promise<Tag[] | null> {
    try {
      const res = await this.client.send(new GetObjectTaggingCommand({ Bucket: this.bucket, Key: key }));
      return res.TagSet ?? [];
    } catch (err) {
      if (isNotFound(err)) return null;
      throw new BlobStoreError(operation, this.location(key), err);
    }
  }
}
