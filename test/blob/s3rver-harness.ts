/**
 * s3rver on loopback for the S3 adapter's tests: a free port, a temporary directory, one bucket; a PUT made atomic
 * as S3's is (atomicPuts).
 */
import { createHash } from 'crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'fs';
import { mkdir, rename, writeFile } from 'fs/promises';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import * as path from 'path';
import { S3Client } from '@aws-sdk/client-s3';

/** s3rver's filesystem store: the parts atomicPuts replaces and uses */
interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
}

interface S3rverObject {
  bucket: string;
  key: string;
  metadata: unknown;
  content: Buffer | AsyncIterable<Buffer>;
}

interface S3rverInstance {
  store: S3rverStore;
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

export interface S3rverHarness {
  endpoint: string;
  bucket: string;
  client: S3Client;
  stop(): Promise<void>;
}

export async function startS3rver(bucket = 'utxo-blobs'): Promise<S3rverHarness> {
  // s3rver ships no type declarations
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const S3rver = require('s3rver') as S3rverConstructor;
  const directory = mkdtempSync(path.join(tmpdir(), 's3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const staging = `${directory}-staging`;
  mkdirSync(staging);
  atomicPuts(server.store, staging);
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  return {
    endpoint,
    bucket,
    client,
    stop: async () => {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
      rmSync(staging, { recursive: true, force: true });
    },
  };
}

/**
 * s3rver writes a PUT's bytes into the object's file in place, so a HEAD or GET racing the PUT sees a partly written
 * object (the contract's concurrent puts then failed as a conflict now and then); an S3 object appears whole or not
 * at all. Here each PUT's bytes are written to a file in `staging` (the same file system) and renamed over the
 * object's file: a reader sees the old object or the new one, whole.
 */
function atomicPuts(store: S3rverStore, staging: string): void {
  let written = 0;
  store.putObject = async (object) => {
    const objectPath = store.getResourcePath(object.bucket, object.key, 'object');
    const chunks: Buffer[] = [];
    if (Buffer.isBuffer(object.content)) chunks.push(object.content);
    else for await (const chunk of object.content) chunks.push(chunk);
    const content = Buffer.concat(chunks);
    const md5 = createHash('md5').update(content).digest('hex');
    const temporary = path.join(staging, `${++written}`);
    await writeFile(temporary, content);
    await mkdir(path.dirname(objectPath), { recursive: true });
    await store.putMetadata(object.bucket, object.key, object.metadata, md5);
    await rename(temporary, objectPath);
    return { size: content.length, md5 };
  };
}
