/**
 * The signal queue's SQS behaviour on fauxqs (scripts/e2e/aws-emulator.ts), through the AWS SDK's own client: what
 * SqsQueue sends, what SQS does with a message after it (visibility timeout, delete, redrive to the dead-letter
 * queue), and the signal consumer driven as the Lambda event source mapping drives it (scripts/e2e/event-source-
 * mapping.ts): batches, a partial batch failure returned to the queue until the redrive policy moves it.
 */
import '../functions/powertools-env';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { handler as signals } from '../../functions/signals';
import { BIN } from '../../lib/domain/bins';
import { masterKey, paginationKey } from '../../lib/domain/keys';
import { txidToBytes } from '../../lib/domain/txid';
import { getRuntime, resetRuntime } from '../../lib/runtime';
import { parseSignalMessage } from '../../lib/signals/message';
import type { Signal } from '../../lib/signals/port';
import { SignalQueueUnavailableError, SqsQueue } from '../../lib/signals/sqs-queue';
import {
  EMULATOR_CREDENTIALS,
  EMULATOR_REGION,
  startAwsEmulator,
  type AwsEmulator,
  type CreatedQueue,
} from '../../scripts/e2e/aws-emulator';
import { drain, type EventSourceMapping } from '../../scripts/e2e/event-source-mapping';
import { captureStdout, lambdaContext } from '../functions/events';
import { makeTx, rootTx } from '../fixtures/txs';

let aws: AwsEmulator;
let dlq: CreatedQueue;

beforeAll(async () => {
  aws = await startAwsEmulator();
  dlq = await aws.createQueue({ name: 'signals-dlq' });
});
afterAll(async () => {
  await aws?.stop();
});

let queues = 0;
/** a fresh queue per test: VisibilityTimeout 1 s unless said, a redrive policy to the DLQ when maxReceiveCount */
async function queue(o: { visibilityTimeout?: number; maxReceiveCount?: number } = {}): Promise<CreatedQueue> {
  const attributes: Record<string, string> = { VisibilityTimeout: String(o.visibilityTimeout ?? 1) };
  if (o.maxReceiveCount !== undefined)
    attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: o.maxReceiveCount });
  return aws.createQueue({ name: `q${queues++}`, attributes });
}

async function receive(q: CreatedQueue, o: { max?: number; visibilityTimeout?: number } = {}): Promise<Message[]> {
  const res = await aws.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: q.url,
      MaxNumberOfMessages: o.max ?? 10,
      VisibilityTimeout: o.visibilityTimeout,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return res.Messages ?? [];
}

async function depth(q: CreatedQueue): Promise<{ visible: number; inFlight: number }> {
  const { Attributes: a } = await aws.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: q.url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(a!.ApproximateNumberOfMessages),
    inFlight: Number(a!.ApproximateNumberOfMessagesNotVisible),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const txidOf = (i: number) => i.toString(16).padStart(64, '0');

describe('SqsQueue on fauxqs', () => {
  test('25 signals: 3 SendMessageBatch calls; each arrives once, as the body parseSignalMessage reads', async () => {
    const q = await queue();
    const sent: Signal[] = Array.from({ length: 25 }, (_, i) => ({
      txid: txidOf(i),
      signal: i % 2 ? 'ALLSPENT' : 'DAHSET',
      height: 1000 + i,
    }));
    const before = aws.sqsCalls.length;
    await new SqsQueue({ client: aws.sqs, queueUrl: q.url }).send(sent);
    expect(aws.sqsCalls.slice(before)).toEqual(['SendMessageBatch', 'SendMessageBatch', 'SendMessageBatch']);
    const got: Signal[] = [];
    for (let m = await receive(q); m.length > 0; m = await receive(q))
      got.push(...m.map((x) => parseSignalMessage(x.Body!)));
    expect(got.sort((a, b) => a.txid.localeCompare(b.txid))).toEqual(sent);
  });

  test('ping: a queue answers; a missing queue is SignalQueueUnavailableError', async () => {
    const q = await queue();
    await expect(new SqsQueue({ client: aws.sqs, queueUrl: q.url }).ping()).resolves.toBeUndefined();
    const missing = new SqsQueue({ client: aws.sqs, queueUrl: `${aws.endpoint}/000000000000/no-such-queue` });
    await expect(missing.ping()).rejects.toBeInstanceOf(SignalQueueUnavailableError);
    await expect(missing.send([{ txid: txidOf(1), signal: 'DAHSET', height: 1 }])).rejects.toThrow(/no-such-queue/);
  });
});

describe('SQS message life on fauxqs', () => {
  test('visibility timeout: a received message is hidden, then comes back with its receive count raised', async () => {
    const q = await queue({ visibilityTimeout: 1 });
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: 'm' }));
    const [first] = await receive(q);
    expect(first.Attributes?.ApproximateReceiveCount).toBe('1');
    expect(await receive(q)).toEqual([]);
    expect(await depth(q)).toEqual({ visible: 0, inFlight: 1 });
    await sleep(1300);
    const [again] = await receive(q);
    expect(again.MessageId).toBe(first.MessageId);
    expect(again.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(again.ReceiptHandle).not.toBe(first.ReceiptHandle);
  });

  test('delete: a deleted message does not come back after the timeout', async () => {
    const q = await queue({ visibilityTimeout: 1 });
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: 'm' }));
    const [m] = await receive(q);
    await aws.sqs.send(new DeleteMessageCommand({ QueueUrl: q.url, ReceiptHandle: m.ReceiptHandle }));
    await sleep(1300);
    expect(await receive(q)).toEqual([]);
    expect(await depth(q)).toEqual({ visible: 0, inFlight: 0 });
  });

  test('ChangeMessageVisibility 0 returns a message at once (what the local event source mapping does)', async () => {
    const q = await queue({ visibilityTimeout: 60 });
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: 'm' }));
    const [m] = await receive(q);
    await aws.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: q.url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 }),
    );
    expect((await receive(q)).map((x) => x.MessageId)).toEqual([m.MessageId]);
  });

  test('redrive: after maxReceiveCount receives the message is moved to the dead-letter queue', async () => {
    const q = await queue({ maxReceiveCount: 2 });
    const body = `poison ${queues}`;
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: body }));
    expect(await receive(q, { visibilityTimeout: 0 })).toHaveLength(1);
    expect(await receive(q, { visibilityTimeout: 0 })).toHaveLength(1);
    expect(await receive(q, { visibilityTimeout: 0 })).toEqual([]);
    expect(await depth(q)).toEqual({ visible: 0, inFlight: 0 });
    const dead = await receive(dlq);
    expect(dead.map((m) => m.Body)).toEqual([body]);
    await aws.sqs.send(new DeleteMessageCommand({ QueueUrl: dlq.url, ReceiptHandle: dead[0].ReceiptHandle }));
  });
});

describe('the signal consumer driven by the event source mapping, on fauxqs', () => {
  const saved = { ...process.env };
  let blobDir: string;
  let signalQueue: CreatedQueue;

  beforeAll(async () => {
    signalQueue = await queue({ visibilityTimeout: 30, maxReceiveCount: 3 });
    blobDir = mkdtempSync(path.join(tmpdir(), 'sqs-emulator-'));
    Object.assign(process.env, {
      UTXO_STORE: 'embedded::memory:',
      BLOB_STORE: `file:${blobDir}`,
      SIGNAL_QUEUE: signalQueue.url,
      UTXO_BATCH_SIZE: '2',
      AWS_REGION: EMULATOR_REGION,
      AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
    });
    await resetRuntime();
  });
  afterAll(async () => {
    await resetRuntime();
    process.env = saved;
    rmSync(blobDir, { recursive: true, force: true });
  });

  test('the store sends its signals to SQS; batches reconcile them; a poison message is redriven', async () => {
    const { store, engine } = await getRuntime();
    await store.setChainTip(999, { force: true });
    const parent = rootTx(5); // UTXO_BATCH_SIZE 2: a master and two pagination records
    await store.create(parent.hex);
    await store.setMined({ txids: [parent.txid], blockId: 1, blockHeight: 1000, subtreeIdx: 0 });
    const before = aws.sqsCalls.filter((c) => c === 'SendMessageBatch').length;
    await store.spend({ tx: makeTx({ inputs: [0, 1, 2, 3, 4].map((vout) => ({ parent, vout })) }).hex });
    expect(aws.sqsCalls.filter((c) => c === 'SendMessageBatch').length).toBeGreaterThan(before);

    // the delete-at-height of a fully spent tx is the reconciler's: nothing consumed the signals yet
    const txid = txidToBytes(parent.txid, 'txid');
    const records = [masterKey(txid), paginationKey(txid, 1), paginationKey(txid, 2)];
    const dahs = async () => (await engine.batchGet(records)).map((r) => r?.bins[BIN.deleteAtHeight]);
    expect(await dahs()).toEqual([undefined, undefined, undefined]);
    const signalsSent = (await depth(signalQueue)).visible;
    expect(signalsSent).toBeGreaterThan(0);
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: signalQueue.url, MessageBody: 'not a signal' }));

    const invocations: number[] = [];
    const mapping: EventSourceMapping = {
      sqs: aws.sqs,
      queueUrl: signalQueue.url,
      queueArn: signalQueue.arn,
      region: EMULATOR_REGION,
      batchSize: 2,
      reportBatchItemFailures: true,
      invoke: async (event) => {
        invocations.push(event.Records.length);
        return (await captureStdout(() => signals(event, lambdaContext()))).result;
      },
    };
    const done = await drain(mapping);
    // every signal handled once; the poison message received maxReceiveCount (3) times, failed each time
    expect(done.failedItems).toBe(3);
    expect(done.messages).toBe(signalsSent + 3);
    expect(Math.max(...invocations)).toBeLessThanOrEqual(2);
    const [dah, ...pages] = await dahs();
    expect(typeof dah).toBe('number');
    expect(pages).toEqual([dah, dah]);
    expect(await depth(signalQueue)).toEqual({ visible: 0, inFlight: 0 });
    const dead = await receive(dlq);
    expect(dead.map((m) => m.Body)).toEqual(['not a signal']);
  });

  test('a failed invocation returns the whole batch to the queue', async () => {
    const body = JSON.stringify({ txid: txidOf(7), signal: 'DAHSET', height: 1 });
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: signalQueue.url, MessageBody: body }));
    const failing: EventSourceMapping = {
      sqs: aws.sqs,
      queueUrl: signalQueue.url,
      queueArn: signalQueue.arn,
      region: EMULATOR_REGION,
      batchSize: 10,
      reportBatchItemFailures: true,
      invoke: async () => {
        throw new Error('the function crashed');
      },
    };
    await expect(drain(failing)).rejects.toThrow(/crashed/);
    expect(await depth(signalQueue)).toEqual({ visible: 1, inFlight: 0 });
    const done = await drain({
      ...failing,
      invoke: async (event) => (await captureStdout(() => signals(event, lambdaContext()))).result,
    });
    expect(done).toEqual({ batches: 1, messages: 1, failedItems: 0 });
    expect(await depth(signalQueue)).toEqual({ visible: 0, inFlight: 0 });
  });
});
