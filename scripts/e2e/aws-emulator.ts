/**
 * The local AWS the tests and `npm run e2e` use: fauxqs (a maintained SQS/SNS/S3 emulator on npm), built in-process on
 * loopback (port 0 = a free port), with the store's buckets and queues created through the AWS SDK's own clients.
 * One endpoint serves S3 (path style) and SQS; a queue's URL is http://127.0.0.1:<port>/000000000000/<name>
 * (queueUrlHost), so that a client made from the environment reaches it as the SQS client reaches a real queue:
 * through the queue URL's host (the client sends there; AWS_ENDPOINT_URL_SQS does not change that). fauxqs's own
 * default, http://sqs.<region>.localhost:<port>/..., needs *.localhost to resolve, which glibc does not do.
 *
 * fauxqs does not serve two S3 behaviours the store needs (object tagging, PUT with If-None-Match); the piece of our own
 * covering only those is e2e/s3-emulator-gaps.ts, added unless `s3Gaps: false` (the tests that show the gaps).
 * Every SQS operation called is kept in `sqsCalls` (for the e2e run's report).
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type * as Fauxqs from 'fauxqs';
import { serveS3Gaps } from './s3-emulator-gaps';

export const EMULATOR_REGION = 'us-east-1';
/** fauxqs checks no credentials; the SDK only needs some to sign with */
export const EMULATOR_CREDENTIALS = { accessKeyId: 'fauxqs', secretAccessKey: 'fauxqs' };

/** the scheme, host and port of the URLs of the queues served on this port */
export function queueUrlHost(port: number): string {
  return `http://127.0.0.1:${port}`;
}

export interface QueueDefinition {
  name: string;
  /** SQS queue attributes as CreateQueue takes them (VisibilityTimeout, RedrivePolicy, FifoQueue, ...) */
  attributes?: Record<string, string>;
}

export interface AwsEmulatorOptions {
  /** default 0: a free port */
  port?: number;
  /** the address it listens on (default 127.0.0.1; the drill's: the bridge its node namespaces reach) */
  host?: string;
  buckets?: string[];
  /** created in order: a dead-letter queue before the queue whose redrive policy names it */
  queues?: QueueDefinition[];
  /** default true: serve object tagging and If-None-Match (e2e/s3-emulator-gaps.ts) in front of fauxqs */
  s3Gaps?: boolean;
}

export interface CreatedQueue {
  url: string;
  arn: string;
}

export interface AwsEmulator {
  /** http://<host>:<port>, for S3 and SQS */
  readonly endpoint: string;
  readonly s3: S3Client;
  readonly sqs: SQSClient;
  /** the created queues by name */
  readonly queues: Map<string, CreatedQueue>;
  /** every SQS operation called, in order (SendMessageBatch, ReceiveMessage, ...) */
  readonly sqsCalls: string[];
  createQueue(queue: QueueDefinition): Promise<CreatedQueue>;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

type Stores = NonNullable<Fauxqs.BuildAppOptions['stores']>;
interface FauxqsModules {
  buildApp: typeof Fauxqs.buildApp;
  SqsStore: new () => Stores['sqsStore'];
  SnsStore: new () => Stores['snsStore'];
  S3Store: new () => Stores['s3Store'];
}

/**
 * fauxqs is an ES module whose package exports only an "import" condition, which this CommonJS project's require
 * cannot resolve: its files are loaded by path (Node 20.19+ requires ES modules; jest transforms them). The stores
 * are its own classes, made here so that the SQS store's queue URL host can be left unset (see above).
 */
function loadFauxqs(): FauxqsModules {
  const dirs = require.resolve.paths('fauxqs') ?? [];
  for (const dir of [...dirs, path.join(__dirname, '..', '..', 'node_modules')]) {
    const dist = path.join(dir, 'fauxqs', 'dist');
    if (!existsSync(path.join(dist, 'app.js'))) continue;
    /* eslint-disable @typescript-eslint/no-require-imports */
    return {
      buildApp: (require(path.join(dist, 'app.js')) as typeof Fauxqs).buildApp,
      SqsStore: (require(path.join(dist, 'sqs', 'sqsStore.js')) as Pick<FauxqsModules, 'SqsStore'>).SqsStore,
      SnsStore: (require(path.join(dist, 'sns', 'snsStore.js')) as Pick<FauxqsModules, 'SnsStore'>).SnsStore,
      S3Store: (require(path.join(dist, 's3', 's3Store.js')) as Pick<FauxqsModules, 'S3Store'>).S3Store,
    };
    /* eslint-enable @typescript-eslint/no-require-imports */
  }
  throw new Error('fauxqs is not installed (npm ci installs it as a devDependency)');
}

export async function startAwsEmulator(o: AwsEmulatorOptions = {}): Promise<AwsEmulator> {
  const fauxqs = loadFauxqs();
  const sqsStore = new fauxqs.SqsStore();
  // no host: a queue's URL is made from the CreateQueue request's Host header, 127.0.0.1:<port>
  sqsStore.host = '';
  const app: FastifyInstance = fauxqs.buildApp({
    logger: false,
    defaultRegion: EMULATOR_REGION,
    stores: { sqsStore, snsStore: new fauxqs.SnsStore(), s3Store: new fauxqs.S3Store() },
  });
  const sqsCalls: string[] = [];
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const target = request.headers['x-amz-target'];
    if (typeof target === 'string' && target.startsWith('AmazonSQS.')) sqsCalls.push(target.slice(10));
  });
  if (o.s3Gaps !== false) serveS3Gaps(app);
  const host = o.host ?? '127.0.0.1';
  const address = await app.listen({ port: o.port ?? 0, host });
  const endpoint = `http://${host}:${new URL(address).port}`;
  const common = { endpoint, region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS };
  const s3 = new S3Client({ ...common, forcePathStyle: true });
  const sqs = new SQSClient(common);
  const queues = new Map<string, CreatedQueue>();

  const emulator: AwsEmulator = {
    endpoint,
    s3,
    sqs,
    queues,
    sqsCalls,
    async createQueue(q) {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: q.name, Attributes: q.attributes }));
      const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
      const created = { url: QueueUrl!, arn: attributes.Attributes!.QueueArn! };
      queues.set(q.name, created);
      return created;
    },
    async createBucket(name) {
      await s3.send(new CreateBucketCommand({ Bucket: name }));
    },
    async stop() {
      s3.destroy();
      sqs.destroy();
      await app.close();
    },
  };
  try {
    for (const bucket of o.buckets ?? []) await emulator.createBucket(bucket);
    for (const queue of o.queues ?? []) await emulator.createQueue(queue);
  } catch (err) {
    await emulator.stop();
    throw err;
  }
  return emulator;
}
