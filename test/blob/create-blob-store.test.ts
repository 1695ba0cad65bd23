import * as path from 'path';
import { S3Client } from '@aws-sdk/client-s3';
import { createBlobStore, FileBlobStore, S3BlobStore } from '../../lib/blob';
import { InvalidArgumentError } from '../../lib/domain/errors';
import { thrown } from '../fixtures/thrown';

const TXID = 'f'.repeat(64);

describe('createBlobStore', () => {
  test('file:<relative dir> resolves against the working directory', () => {
    const store = createBlobStore('file:./data/blobs');
    expect(store).toBeInstanceOf(FileBlobStore);
    expect(store.kind).toBe('file');
    expect((store as FileBlobStore).pathOf(TXID, 'tx')).toBe(path.resolve('data/blobs', `${TXID}.tx`));
  });

  test('file:<absolute dir> and file:///<absolute dir>', () => {
    const a = createBlobStore('file:/var/lib/utxo/blobs') as FileBlobStore;
    expect(a.pathOf(TXID, 'outputs')).toBe(path.join('/var/lib/utxo/blobs', `${TXID}.outputs`));
    const b = createBlobStore('file:///var/lib/utxo/blobs') as FileBlobStore;
    expect(b.pathOf(TXID, 'tx')).toBe(path.join('/var/lib/utxo/blobs', `${TXID}.tx`));
  });

  test('s3://bucket/prefix', () => {
    const client = new S3Client({ region: 'eu-west-1' });
    const store = createBlobStore('s3://utxo-blobs.prod/mainnet/v1/', { s3Client: client }) as S3BlobStore;
    expect(store).toBeInstanceOf(S3BlobStore);
    expect(store.kind).toBe('s3');
    expect(store.bucket).toBe('utxo-blobs.prod');
    expect(store.keyOf(TXID, 'tx')).toBe(`mainnet/v1/${TXID}.tx`);
  });

  test('s3://bucket without a prefix, with the default client', () => {
    const store = createBlobStore('s3://utxo-blobs') as S3BlobStore;
    expect(store.keyOf(TXID, 'tx')).toBe(`${TXID}.tx`);
  });

  test.each([
    ['', /empty/],
    ['   ', /empty/],
    ['./data/blobs', /unknown scheme/],
    ['http://example.com/blobs', /unknown scheme/],
    ['file:', /missing directory/],
    ['file://host/share', /BLOB_STORE/],
    ['s3://', /bad bucket name ""/],
    ['s3://Upper_Case/x', /bad bucket name "Upper_Case"/],
    ['s3://ab/x', /bad bucket name/],
    ['s3://bucket/x?versionId=1', /prefix must not contain/],
  ])('rejects %j with a message naming BLOB_STORE', (url, message) => {
    const err = thrown(() => createBlobStore(url));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(/^BLOB_STORE: /);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).toContain('expected file:<dir> or s3://<bucket>/<prefix>');
  });
});
