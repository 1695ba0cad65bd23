import { GetObjectTaggingCommand, PutObjectTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobStoreError, S3BlobStore } from '../../lib/blob';
import { startAwsEmulator, type AwsEmulator } from '../../scripts/e2e/aws-emulator';
import { describeBlobContract } from './blob-contract';

const TXID = 'd'.repeat(64);
const BUCKET = 'utxo-blobs';
let emulator: AwsEmulator;
const s3 = {
  get client(): S3Client {
    return emulator.s3;
  },
  bucket: BUCKET,
};

beforeAll(async () => {
  emulator = await startAwsEmulator({ buckets: [BUCKET] });
});
afterAll(async () => {
  await emulator?.stop();
});

let prefixes = 0;
describeBlobContract(
  'S3BlobStore on fauxqs',
  async () => new S3BlobStore({ client: s3.client, bucket: s3.bucket, prefix: `run${prefixes++}` }),
);
describeBlobContract(
  'S3BlobStore on fauxqs without a prefix',
  async () => new S3BlobStore({ client: s3.client, bucket: s3.bucket }),
);

describe('S3BlobStore on fauxqs: keys, tags and failures', () => {
  test('objects are <prefix>/<txid>.tx with the tag deleteAtHeight; other tags are kept', async () => {
    const store = new S3BlobStore({ client: s3.client, bucket: s3.bucket, prefix: 'blobs/' });
    const key = `blobs/${TXID}.tx`;
    expect(store.keyOf(TXID, 'tx')).toBe(key);
    await store.put(TXID, 'tx', Buffer.from([1, 2, 3]));
    await s3.client.send(
      new PutObjectTaggingCommand({
        Bucket: s3.bucket,
        Key: key,
        Tagging: { TagSet: [{ Key: 'owner', Value: 'ops' }] },
      }),
    );
    await store.setDeleteAtHeight(TXID, 'tx', 777);
    const tags = async () =>
      (await s3.client.send(new GetObjectTaggingCommand({ Bucket: s3.bucket, Key: key }))).TagSet ?? [];
    expect(await tags()).toEqual(
      expect.arrayContaining([
        { Key: 'owner', Value: 'ops' },
        { Key: 'deleteAtHeight', Value: '777' },
      ]),
    );
    await store.setDeleteAtHeight(TXID, 'tx', null);
    expect(await tags()).toEqual([{ Key: 'owner', Value: 'ops' }]);
  });

  test('a missing bucket: ping and reads fail with BlobStoreError naming the bucket', async () => {
    const store = new S3BlobStore({ client: s3.client, bucket: 'no-such-bucket' });
    await expect(store.ping()).rejects.toThrow(/blob store ping of s3:\/\/no-such-bucket failed/);
    const err = await store.get(TXID, 'tx').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobStoreError);
    expect((err as BlobStoreError).key).toBe(`s3://no-such-bucket/${TXID}.tx`);
    await expect(store.put(TXID, 'tx', Buffer.from([1]))).rejects.toBeInstanceOf(BlobStoreError);
  });

  test('a missing bucket is an error for exists and delete, not a missing blob (HeadObject 404 has no body)', async () => {
    const store = new S3BlobStore({ client: s3.client, bucket: 'no-such-bucket' });
    await expect(store.exists(TXID, 'tx')).rejects.toThrow(/blob store exists of s3:\/\/no-such-bucket\/d+\.tx failed/);
    await expect(store.delete(TXID, 'tx')).rejects.toBeInstanceOf(BlobStoreError);
    await expect(store.setDeleteAtHeight(TXID, 'tx', 5)).rejects.toBeInstanceOf(BlobStoreError);
    await expect(store.getDeleteAtHeight(TXID, 'tx')).rejects.toBeInstanceOf(BlobStoreError);
  });

  test('an unreachable endpoint fails ping with BlobStoreError', async () => {
    const client = new S3Client({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      maxAttempts: 1,
    });
    try {
      await expect(new S3BlobStore({ client, bucket: s3.bucket }).ping()).rejects.toBeInstanceOf(BlobStoreError);
    } finally {
      client.destroy();
    }
  });

  test('the constructor requires a client and a bucket', () => {
    expect(() => new S3BlobStore({ client: s3.client, bucket: '' })).toThrow(/bucket/);
    expect(() => new S3BlobStore({ client: undefined as never, bucket: 'b' })).toThrow(/client/);
  });
});
