/**
 * The S3 behaviours the store needs that fauxqs does not serve (docs/e2e.md, "What fauxqs does not serve"): each is
 * shown on fauxqs alone (what it answers where AWS answers otherwise), then with scripts/e2e/s3-emulator-gaps.ts in
 * front, which answers as AWS does. When a fauxqs release serves one of them, its "fauxqs alone" test fails, and the
 * piece of our own covering it can go.
 */
import {
  DeleteObjectCommand,
  DeleteObjectTaggingCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { startAwsEmulator, type AwsEmulator } from '../../scripts/e2e/aws-emulator';
import { parseTagging } from '../../scripts/e2e/s3-emulator-gaps';

const BUCKET = 'gaps';
let bare: AwsEmulator;
let served: AwsEmulator;

beforeAll(async () => {
  [bare, served] = await Promise.all([
    startAwsEmulator({ buckets: [BUCKET], s3Gaps: false }),
    startAwsEmulator({ buckets: [BUCKET] }),
  ]);
});
afterAll(async () => {
  await Promise.all([bare?.stop(), served?.stop()]);
});

const put = (s3: S3Client, Key: string, body: string, IfNoneMatch?: string) =>
  s3.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: Buffer.from(body), IfNoneMatch }));
const read = async (s3: S3Client, Key: string) =>
  (await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key }))).Body!.transformToString()) as string;
const tag = (s3: S3Client, Key: string, TagSet: { Key: string; Value: string }[]) =>
  s3.send(new PutObjectTaggingCommand({ Bucket: BUCKET, Key, Tagging: { TagSet } }));
const tags = async (s3: S3Client, Key: string) =>
  (await s3.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key }))).TagSet ?? [];
const failure = (p: Promise<unknown>) =>
  p.then(
    () => ({ name: 'resolved', status: 200 }),
    (e: { name: string; $metadata?: { httpStatusCode?: number } }) => ({
      name: e.name,
      status: e.$metadata?.httpStatusCode,
    }),
  );

describe('PutObject with If-None-Match: * (AWS: 412 PreconditionFailed when the key exists)', () => {
  test('fauxqs alone ignores the condition and overwrites the object', async () => {
    await put(bare.s3, 'inm', 'first');
    await expect(put(bare.s3, 'inm', 'second', '*')).resolves.toBeDefined();
    expect(await read(bare.s3, 'inm')).toBe('second');
  });

  test('with the gap piece: 412 PreconditionFailed and the object is kept; a new key is created', async () => {
    await put(served.s3, 'inm', 'first', '*');
    expect(await failure(put(served.s3, 'inm', 'second', '*'))).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await read(served.s3, 'inm')).toBe('first');
  });

  test('with the gap piece: of concurrent conditional puts of one key exactly one is created', async () => {
    const results = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((body) => failure(put(served.s3, 'race', body.repeat(100_000), '*'))),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 412)).toHaveLength(4);
  });

  test('with the gap piece: a missing bucket is still NoSuchBucket', async () => {
    const e = await failure(
      served.s3.send(new PutObjectCommand({ Bucket: 'no-such', Key: 'k', Body: Buffer.from('x'), IfNoneMatch: '*' })),
    );
    expect(e).toEqual({ name: 'NoSuchBucket', status: 404 });
  });
});

describe('object tagging (AWS: Get/PutObjectTagging read and write the tag set, not the object)', () => {
  test('fauxqs alone takes PutObjectTagging for a PutObject: the object becomes the tag XML', async () => {
    await put(bare.s3, 'tagged', 'bytes');
    await tag(bare.s3, 'tagged', [{ Key: 'deleteAtHeight', Value: '7' }]);
    const now = await read(bare.s3, 'tagged');
    expect(now).not.toBe('bytes');
    expect(parseTagging(now)).toEqual([{ Key: 'deleteAtHeight', Value: '7' }]);
  });

  test('with the gap piece: the tag set round-trips and the bytes are untouched', async () => {
    await put(served.s3, 'tagged', 'bytes');
    expect(await tags(served.s3, 'tagged')).toEqual([]);
    const set = [
      { Key: 'owner', Value: 'a&b <c>' },
      { Key: 'deleteAtHeight', Value: '7' },
    ];
    await tag(served.s3, 'tagged', set);
    expect(await tags(served.s3, 'tagged')).toEqual(set);
    expect(await read(served.s3, 'tagged')).toBe('bytes');
  });

  test('with the gap piece: tags go with the object (deleted and put again = no tags)', async () => {
    await put(served.s3, 'again', 'one');
    await tag(served.s3, 'again', [{ Key: 'deleteAtHeight', Value: '1' }]);
    await served.s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'again' }));
    expect(await failure(tags(served.s3, 'again'))).toEqual({ name: 'NoSuchKey', status: 404 });
    await put(served.s3, 'again', 'two');
    expect(await tags(served.s3, 'again')).toEqual([]);
  });

  test('with the gap piece: a missing key is NoSuchKey, a missing bucket NoSuchBucket', async () => {
    expect(await failure(tag(served.s3, 'missing', []))).toEqual({ name: 'NoSuchKey', status: 404 });
    const bucketless = served.s3.send(new GetObjectTaggingCommand({ Bucket: 'no-such', Key: 'k' }));
    expect(await failure(bucketless)).toEqual({ name: 'NoSuchBucket', status: 404 });
  });

  test('with the gap piece: what the store does not use is NotImplemented, not a silent overwrite', async () => {
    await put(served.s3, 'dot', 'bytes');
    const e = await failure(served.s3.send(new DeleteObjectTaggingCommand({ Bucket: BUCKET, Key: 'dot' })));
    expect(e).toEqual({ name: 'NotImplemented', status: 501 });
    expect(await read(served.s3, 'dot')).toBe('bytes');
  });
});
