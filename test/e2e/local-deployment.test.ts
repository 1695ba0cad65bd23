/**
 * The e2e run's S3 and SQS (docs/e2e.md, "The local AWS: fauxqs") without Aerospike or Node 22: the local deployment
 * of the app's template (synthesis without bundling, test/cdk/helpers.ts) brings up fauxqs with the template's
 * buckets and queues, and its event source mapping drains the signal queue into the signal consumer (here a
 * recording function in place of the Lambda host) with the template's batch size, partial batch failures and
 * redrive policy.
 */
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { resourcesOfType, type Assembly, type StackArtifact } from '../../scripts/e2e/assembly';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION } from '../../scripts/e2e/aws-emulator';
import { LocalDeployment } from '../../scripts/e2e/local-deployment';
import { bucketName, queueName } from '../../scripts/e2e/stand-ins';
import { synth } from '../cdk/helpers';

/** the deployment with the signal consumer replaced by a function that fails the bodies named 'poison' */
class RecordingDeployment extends LocalDeployment {
  readonly batches: { fn: string; bodies: string[] }[] = [];
  override async invoke(logicalId: string, event: unknown): Promise<unknown> {
    const records = (event as SQSEvent).Records;
    this.batches.push({ fn: logicalId, bodies: records.map((r) => r.body) });
    return {
      batchItemFailures: records.filter((r) => r.body === 'poison').map((r) => ({ itemIdentifier: r.messageId })),
    };
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let work: string;
let d: RecordingDeployment;
let assembly: Assembly;
let sqs: SQSClient;
let s3: S3Client;

beforeAll(async () => {
  const s = synth();
  const stacks: StackArtifact[] = [
    { name: s.cluster.stackName, template: s.clusterTemplate.toJSON() as StackArtifact['template'] },
    { name: s.stack.stackName, template: s.template.toJSON() as StackArtifact['template'] },
  ];
  work = mkdtempSync(path.join(tmpdir(), 'e2e-local-deployment-'));
  // every asset the templates name, as an empty directory: nothing here runs a function's code
  const assetDirs = new Map<string, string>();
  for (const key of JSON.stringify(stacks).match(/[0-9a-f]{64}\.zip/g) ?? []) {
    const dir = path.join(work, 'assets', key);
    mkdirSync(dir, { recursive: true });
    assetDirs.set(key, dir);
  }
  assembly = { dir: work, stacks, assetDirs };
  d = new RecordingDeployment({
    assembly,
    node: process.execPath,
    aerospikeHosts: '127.0.0.1:3000',
    workDir: path.join(work, 'functions'),
    basePort: await freePort(),
  });
  await d.start();
  const client = { endpoint: d.endpoint, region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS };
  sqs = new SQSClient(client);
  s3 = new S3Client({ ...client, forcePathStyle: true });
}, 120_000);

afterAll(async () => {
  sqs?.destroy();
  s3?.destroy();
  await d?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

function signalMapping() {
  const [mapping] = resourcesOfType(assembly, 'AWS::Lambda::EventSourceMapping');
  const arn = mapping.resource.Properties!.EventSourceArn as { 'Fn::GetAtt': [string, string] };
  const queue = mapping.stack.template.Resources[arn['Fn::GetAtt'][0]];
  return { ...mapping, queueId: arn['Fn::GetAtt'][0], queue };
}

test("fauxqs holds the template's buckets and queues, with the template's visibility timeout and redrive", async () => {
  for (const { stack, id } of resourcesOfType(assembly, 'AWS::S3::Bucket'))
    await expect(s3.send(new HeadBucketCommand({ Bucket: bucketName(stack, id) }))).resolves.toBeDefined();
  const { stack, queueId, queue } = signalMapping();
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName(stack, queueId) }));
  expect(QueueUrl).toBe(`${d.endpoint}/000000000000/${queueName(stack, queueId)}`);
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));
  expect(Attributes?.VisibilityTimeout).toBe(String(queue.Properties!.VisibilityTimeout));
  const redrive = JSON.parse(Attributes!.RedrivePolicy!) as { deadLetterTargetArn: string; maxReceiveCount: number };
  const templateRedrive = queue.Properties!.RedrivePolicy as { maxReceiveCount: number };
  expect(redrive.maxReceiveCount).toBe(templateRedrive.maxReceiveCount);
  expect(redrive.deadLetterTargetArn).toMatch(/^arn:aws:sqs:us-east-1:000000000000:/);
});

test('the event source mapping drains the signal queue in batches; a failing message ends in the DLQ', async () => {
  const { stack, queueId, queue, resource } = signalMapping();
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName(stack, queueId) }));
  const bodies = [...Array.from({ length: 11 }, (_, i) => `signal ${i}`), 'poison'];
  for (let i = 0; i < bodies.length; i += 10)
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: bodies.slice(i, i + 10).map((MessageBody, j) => ({ Id: String(j), MessageBody })),
      }),
    );
  const done = await d.drainEventSources();
  const maxReceiveCount = (queue.Properties!.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount;
  const batchSize = Number(resource.Properties!.BatchSize);
  expect(done.failedItems).toBe(maxReceiveCount);
  expect(done.messages).toBe(11 + maxReceiveCount);
  expect(Math.max(...d.batches.map((b) => b.bodies.length))).toBeLessThanOrEqual(batchSize);
  expect(new Set(d.batches.map((b) => b.fn))).toEqual(
    new Set([(resource.Properties!.FunctionName as { Ref: string }).Ref]),
  );
  expect(
    d.batches
      .flatMap((b) => b.bodies)
      .filter((b) => b !== 'poison')
      .sort(),
  ).toEqual(bodies.slice(0, 11).sort());

  const dlqArn = JSON.parse(
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['RedrivePolicy'] }))).Attributes!
      .RedrivePolicy!,
  ).deadLetterTargetArn as string;
  const dlq = await sqs.send(new GetQueueUrlCommand({ QueueName: dlqArn.slice(dlqArn.lastIndexOf(':') + 1) }));
  const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq.QueueUrl, MaxNumberOfMessages: 10 }));
  expect((dead.Messages ?? []).map((m) => m.Body)).toEqual(['poison']);
  expect(d.sqsCalls).toEqual(
    expect.arrayContaining(['ReceiveMessage', 'DeleteMessageBatch', 'ChangeMessageVisibilityBatch']),
  );
});
