/**
 * The Lambda SQS event source mapping as the template configures it for the signal consumer, over any SQS endpoint
 * (the e2e run's and the tests' fauxqs): one ReceiveMessage of up to BatchSize (at most 10, the SQS maximum and the
 * stack's limit) messages with their system attributes, the function invoked with the SQSEvent Lambda builds, then
 * - with ReportBatchItemFailures: the items it names are returned to the queue, the others deleted;
 * - without: all deleted when it succeeded;
 * - an invocation that failed (it threw): the whole batch is returned, and the error rethrown.
 * Returned messages are made visible again at once (ChangeMessageVisibility 0) instead of after the queue's
 * visibility timeout, so that a run does not wait for it; their receive count still grows, so the queue's redrive
 * policy moves a message that keeps failing to the dead-letter queue after maxReceiveCount receives, as SQS does.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';

export interface EventSourceMapping {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  region: string;
  /** 1..10 */
  batchSize: number;
  reportBatchItemFailures: boolean;
  /** invokes the function; a rejection is a failed invocation */
  invoke(event: SQSEvent): Promise<unknown>;
}

export interface PollResult {
  messages: number;
  /** items returned to the queue */
  failedItems: number;
}

export function sqsEventOf(messages: Message[], queueArn: string, region: string): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body ?? '',
      attributes: {
        ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: m.Attributes?.SentTimestamp ?? '',
        SenderId: m.Attributes?.SenderId ?? '',
        ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? '',
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: region,
    })),
  };
}

/** One batch: null when the queue had no visible message. */
export async function pollOnce(m: EventSourceMapping): Promise<PollResult | null> {
  if (!Number.isInteger(m.batchSize) || m.batchSize < 1 || m.batchSize > 10)
    throw new RangeError(`BatchSize ${m.batchSize}: the local mapping serves 1..10`);
  const received = await m.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: m.queueUrl,
      MaxNumberOfMessages: m.batchSize,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  const messages = received.Messages ?? [];
  if (messages.length === 0) return null;
  let answer: unknown;
  try {
    answer = await m.invoke(sqsEventOf(messages, m.queueArn, m.region));
  } catch (err) {
    await release(m, messages);
    throw err;
  }
  const reported = (answer as { batchItemFailures?: { itemIdentifier: string }[] } | null)?.batchItemFailures ?? [];
  const failed = new Set(m.reportBatchItemFailures ? reported.map((f) => f.itemIdentifier) : []);
  await release(
    m,
    messages.filter((x) => failed.has(x.MessageId!)),
  );
  const done = messages.filter((x) => !failed.has(x.MessageId!));
  if (done.length > 0) {
    const res = await m.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: m.queueUrl,
        Entries: done.map((x, i) => ({ Id: String(i), ReceiptHandle: x.ReceiptHandle! })),
      }),
    );
    if ((res.Failed ?? []).length > 0) throw new Error(`DeleteMessageBatch failed: ${JSON.stringify(res.Failed)}`);
  }
  return { messages: messages.length, failedItems: messages.length - done.length };
}

/** Batches until the queue has no visible message (or maxRounds). */
export async function drain(
  m: EventSourceMapping,
  maxRounds = 50,
): Promise<{ batches: number; messages: number; failedItems: number }> {
  const total = { batches: 0, messages: 0, failedItems: 0 };
  for (let round = 0; round < maxRounds; round++) {
    const r = await pollOnce(m);
    if (!r) break;
    total.batches++;
    total.messages += r.messages;
    total.failedItems += r.failedItems;
  }
  return total;
}

async function release(m: EventSourceMapping, messages: Message[]): Promise<void> {
  if (messages.length === 0) return;
  const res = await m.sqs.send(
    new ChangeMessageVisibilityBatchCommand({
      QueueUrl: m.queueUrl,
      Entries: messages.map((x, i) => ({ Id: String(i), ReceiptHandle: x.ReceiptHandle!, VisibilityTimeout: 0 })),
    }),
  );
  if ((res.Failed ?? []).length > 0)
    throw new Error(`ChangeMessageVisibilityBatch failed: ${JSON.stringify(res.Failed)}`);
}
