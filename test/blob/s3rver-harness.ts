/**
 * s3rver on loopback for the S3 adapter's tests: a free port, a temporary directory, one bucket.
 */
import { mkdtempSync, rmSync } from 'fs';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import * as path from 'path';
import { S3Client } from '@aws-sdk/client-s3';

interface S3rverInstance {
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
    },
  };
}
