/**
 * The S3 adapter's create-only paths, each forced with a mocked client: the request it sends, a 412 after a
 * concurrent create with identical or different bytes, a 409 ConditionalRequestConflict (which no emulator produces),
 * and an object deleted while it is compared. The 412 from a real race is in the blob contract on fauxqs
 * (s3-blob-store.test.ts, "concurrent puts of different bytes").
 */
import {
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { BlobConflictError, BlobStoreError, S3BlobStore } from '../../lib/blob';

const TXID = 'e'.repeat(64);
const KEY = `p/${TXID}.tx`;
const s3 = mockClient(S3Client);
const store = new S3BlobStore({ client: new S3Client({ region: 'us-east-1' }), bucket: 'b', prefix: 'p' });

function s3Error(name: string, status: number): S3ServiceException {
  return new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status } });
}
/** The part of a GetObject body stream the adapter uses. */
function body(data: Buffer) {
  return { transformToByteArray: async () => new Uint8Array(data) } as never;
}

beforeEach(() => s3.reset());

test('put sends PutObject with If-None-Match: * after a HeadObject miss', async () => {
  s3.on(HeadObjectCommand).rejects(s3Error('NotFound', 404));
  s3.on(PutObjectCommand).resolves({});
  await store.put(TXID, 'tx', Buffer.from([1, 2]));
  const put = s3.commandCalls(PutObjectCommand)[0].args[0].input;
  expect(put).toMatchObject({ Bucket: 'b', Key: KEY, IfNoneMatch: '*', ContentLength: 2 });
});

test('412 PreconditionFailed with identical existing bytes is success', async () => {
  s3.on(HeadObjectCommand).rejectsOnce(s3Error('NotFound', 404)).resolves({ ContentLength: 2 });
  s3.on(PutObjectCommand).rejects(s3Error('PreconditionFailed', 412));
  s3.on(GetObjectCommand).resolves({ Body: body(Buffer.from([1, 2])) });
  await expect(store.put(TXID, 'tx', Buffer.from([1, 2]))).resolves.toBeUndefined();
});

test('412 PreconditionFailed with different existing bytes is BlobConflictError', async () => {
  s3.on(HeadObjectCommand).rejectsOnce(s3Error('NotFound', 404)).resolves({ ContentLength: 2 });
  s3.on(PutObjectCommand).rejects(s3Error('PreconditionFailed', 412));
  s3.on(GetObjectCommand).resolves({ Body: body(Buffer.from([9, 9])) });
  const err = await store.put(TXID, 'tx', Buffer.from([1, 2])).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BlobConflictError);
  expect((err as BlobConflictError).key).toBe(`s3://b/${KEY}`);
});

test('an existing object of another size is a conflict without downloading it', async () => {
  s3.on(HeadObjectCommand).resolves({ ContentLength: 5 });
  await expect(store.put(TXID, 'tx', Buffer.from([1, 2]))).rejects.toBeInstanceOf(BlobConflictError);
  expect(s3.commandCalls(GetObjectCommand)).toHaveLength(0);
  expect(s3.commandCalls(PutObjectCommand)).toHaveLength(0);
});

test('409 ConditionalRequestConflict is retried, then reported', async () => {
  s3.on(HeadObjectCommand).rejects(s3Error('NotFound', 404));
  s3.on(PutObjectCommand).rejectsOnce(s3Error('ConditionalRequestConflict', 409)).resolves({});
  await store.put(TXID, 'tx', Buffer.from([1]));
  expect(s3.commandCalls(PutObjectCommand)).toHaveLength(2);

  s3.reset();
  s3.on(HeadObjectCommand).rejects(s3Error('NotFound', 404));
  s3.on(PutObjectCommand).rejects(s3Error('ConditionalRequestConflict', 409));
  await expect(store.put(TXID, 'tx', Buffer.from([1]))).rejects.toThrow(/blob store put of s3:\/\/b\/p\/e+\.tx failed/);
  expect(s3.commandCalls(PutObjectCommand)).toHaveLength(3);
});

test('other S3 errors become BlobStoreError with the cause attached', async () => {
  const denied = s3Error('AccessDenied', 403);
  s3.on(HeadObjectCommand).rejects(denied);
  const err = await store.exists(TXID, 'tx').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BlobStoreError);
  expect((err as BlobStoreError).operation).toBe('exists');
  expect((err as BlobStoreError).cause).toBe(denied);
});

test('an existing object deleted before its bytes are compared is not a conflict: the put is tried again', async () => {
  s3.on(HeadObjectCommand).resolvesOnce({ ContentLength: 2 }).rejects(s3Error('NotFound', 404));
  s3.on(GetObjectCommand).rejects(s3Error('NoSuchKey', 404));
  s3.on(PutObjectCommand).resolves({});
  await expect(store.put(TXID, 'tx', Buffer.from([1, 2]))).resolves.toBeUndefined();
  expect(s3.commandCalls(PutObjectCommand)).toHaveLength(1);
});

test('412 PreconditionFailed, then the object is gone again: the put is tried again, not failed', async () => {
  s3.on(HeadObjectCommand).rejects(s3Error('NotFound', 404));
  s3.on(PutObjectCommand).rejectsOnce(s3Error('PreconditionFailed', 412)).resolves({});
  await expect(store.put(TXID, 'tx', Buffer.from([1, 2]))).resolves.toBeUndefined();
  expect(s3.commandCalls(PutObjectCommand)).toHaveLength(2);
});
