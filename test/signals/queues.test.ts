import {
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  SQSClient,
  type SendMessageBatchCommandInput,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { InvalidArgumentError } from '../../lib/domain/errors';
import {
  createSignalQueue,
  InlineQueue,
  parseSignalMessage,
  SignalQueueUnavailableError,
  SignalSendError,
  SqsQueue,
  type Signal,
  type SignalHandler,
  type SignalLogger,
} from '../../lib/signals';
import { thrown } from '../fixtures/thrown';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/utxo-signals';
const sqs = mockClient(SQSClient);

function txid(n: number): string {
  return n.toString(16).padStart(64, '0');
}
function signals(count: number): Signal[] {
  return Array.from({ length: count }, (_, i) => ({ txid: txid(i + 1), signal: 'DAHSET' as const, height: 1000 + i }));
}
function entriesOf(call: number): NonNullable<SendMessageBatchCommandInput['Entries']> {
  return sqs.commandCalls(SendMessageBatchCommand)[call].args[0].input.Entries ?? [];
}
/** Answers every SendMessageBatch with success for all entries except the ids `fail` picks. */
function answer(fail: (body: Signal, attempt: number) => { code: string; senderFault?: boolean } | undefined) {
  const attempts = new Map<string, number>();
  sqs.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => {
    const Successful: { Id: string; MessageId: string; MD5OfMessageBody: string }[] = [];
    const Failed: { Id: string; Code: string; Message: string; SenderFault: boolean }[] = [];
    for (const e of input.Entries ?? []) {
      const body = JSON.parse(e.MessageBody!) as Signal;
      const attempt = (attempts.get(body.txid) ?? 0) + 1;
      attempts.set(body.txid, attempt);
      const f = fail(body, attempt);
      if (f)
        Failed.push({ Id: e.Id!, Code: f.code, Message: `${f.code} for ${body.txid}`, SenderFault: !!f.senderFault });
      else Successful.push({ Id: e.Id!, MessageId: `m-${body.txid}`, MD5OfMessageBody: 'x' });
    }
    return { Successful, Failed };
  });
}
function queue(): SqsQueue {
  return new SqsQueue({ client: new SQSClient({ region: 'eu-west-1' }), queueUrl: QUEUE_URL, retryDelayMs: 0 });
}

beforeEach(() => sqs.reset());

describe('SqsQueue', () => {
  test('25 signals go out in 3 SendMessageBatch calls of 10, 10 and 5, as {txid, signal, height} bodies', async () => {
    answer(() => undefined);
    const sent = signals(25);
    await queue().send(sent);
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls.map((c) => c.args[0].input.Entries!.length)).toEqual([10, 10, 5]);
    expect(calls.every((c) => c.args[0].input.QueueUrl === QUEUE_URL)).toBe(true);
    const bodies = [0, 1, 2].flatMap((c) => entriesOf(c).map((e) => JSON.parse(e.MessageBody!)));
    expect(bodies).toEqual(sent);
    expect(new Set(entriesOf(0).map((e) => e.Id)).size).toBe(10);
    expect(entriesOf(0)[0].MessageGroupId).toBeUndefined();
  });

  test('no signals, no call', async () => {
    await queue().send([]);
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  test('only the failed entries are retried', async () => {
    const flaky = new Set([txid(3), txid(12)]);
    answer((s, attempt) => (flaky.has(s.txid) && attempt === 1 ? { code: 'InternalError' } : undefined));
    await queue().send(signals(15));
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls).toHaveLength(3);
    const retried = entriesOf(2).map((e) => JSON.parse(e.MessageBody!).txid);
    expect(retried).toEqual([txid(3), txid(12)]);
  });

  test('entries still failing after the last attempt: SignalSendError naming the txids', async () => {
    answer((s) => (s.txid === txid(7) ? { code: 'ServiceUnavailable' } : undefined));
    const q = new SqsQueue({ client: new SQSClient({}), queueUrl: QUEUE_URL, maxAttempts: 4, retryDelayMs: 0 });
    const err = await q.send(signals(12)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignalSendError);
    const e = err as SignalSendError;
    expect(e.failedTxids).toEqual([txid(7)]);
    expect(e.message).toContain(txid(7));
    expect(e.message).toContain('ServiceUnavailable');
    expect(e.message).toContain(QUEUE_URL);
    // one first call for 12 entries (2 batches) + 3 retries of the one entry
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(5);
  });

  test('sender-fault entries are not retried, but the others still are', async () => {
    answer((s, attempt) => {
      if (s.txid === txid(1)) return { code: 'InvalidMessageContents', senderFault: true };
      if (s.txid === txid(2) && attempt === 1) return { code: 'InternalError' };
      return undefined;
    });
    const err = await queue()
      .send(signals(3))
      .catch((e: unknown) => e);
    expect((err as SignalSendError).failedTxids).toEqual([txid(1)]);
    expect(entriesOf(1).map((e) => JSON.parse(e.MessageBody!).txid)).toEqual([txid(2)]);
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
  });

  test('a call that throws counts as all its entries failing and is retried', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .rejectsOnce(new Error('socket hang up'))
      .resolves({ Successful: [{ Id: '0', MessageId: 'm', MD5OfMessageBody: 'x' }], Failed: [] });
    await queue().send(signals(1));
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(2);

    sqs.reset();
    sqs.on(SendMessageBatchCommand).rejects(new Error('socket hang up'));
    await expect(queue().send(signals(2))).rejects.toThrow(/failed for txids .*01, .*02 \(Error: socket hang up\)/);
  });

  test('an entry SQS reports neither as failed nor successful is retried', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({ Successful: [], Failed: [] })
      .resolves({
        Successful: [{ Id: '0', MessageId: 'm', MD5OfMessageBody: 'x' }],
        Failed: [],
      });
    await queue().send(signals(1));
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
  });

  test('FIFO queues get a group id (the txid) and a deduplication id', async () => {
    answer(() => undefined);
    const q = new SqsQueue({ client: new SQSClient({}), queueUrl: `${QUEUE_URL}.fifo` });
    await q.send(signals(2));
    const [a, b] = entriesOf(0);
    expect(a.MessageGroupId).toBe(txid(1));
    expect(a.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
    expect(a.MessageDeduplicationId).not.toBe(b.MessageDeduplicationId);
  });

  test('FIFO: the same signal raised again later is not deduplicated away; a retried entry keeps its id', async () => {
    // ALLSPENT@h, NOTALLSPENT@h, ALLSPENT@h: the third must reach the reconciler, or the page's state is lost
    answer((s, attempt) => (attempt === 2 ? { code: 'InternalError' } : undefined));
    const q = new SqsQueue({ client: new SQSClient({}), queueUrl: `${QUEUE_URL}.fifo`, retryDelayMs: 0 });
    const same = signals(1);
    await q.send(same); // attempt 1: accepted
    await q.send(same); // attempt 2 fails, attempt 3 (the retry) accepted
    const ids = [0, 1, 2].map((c) => entriesOf(c)[0].MessageDeduplicationId);
    expect(ids[1]).not.toBe(ids[0]);
    expect(ids[2]).toBe(ids[1]);
  });

  test('ping asks for the queue attributes; a failure is SignalQueueUnavailableError', async () => {
    sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { QueueArn: 'arn:aws:sqs:eu-west-1:123456789012:q' } });
    await queue().ping();
    expect(sqs.commandCalls(GetQueueAttributesCommand)[0].args[0].input.QueueUrl).toBe(QUEUE_URL);

    sqs.on(GetQueueAttributesCommand).rejects(new Error('AccessDenied'));
    const err = await queue()
      .ping()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignalQueueUnavailableError);
    expect((err as Error).message).toBe(`signal queue ${QUEUE_URL} is not reachable: AccessDenied`);
  });
});

describe('parseSignalMessage', () => {
  const valid = { txid: txid(1), signal: 'ALLSPENT', height: 0 };

  test('a valid body; unknown extra fields are dropped', () => {
    expect(parseSignalMessage(JSON.stringify(valid))).toEqual(valid);
    expect(parseSignalMessage(JSON.stringify({ ...valid, extra: 1 }))).toEqual(valid);
    for (const signal of ['DAHSET', 'DAHUNSET', 'ALLSPENT', 'NOTALLSPENT', 'PRESERVE', 'CREATING']) {
      expect(parseSignalMessage(JSON.stringify({ ...valid, signal })).signal).toBe(signal);
    }
  });

  test.each([
    ['not json', 'body', /not JSON/],
    ['null', 'body', /expected object/],
    ['[]', 'body', /expected object/],
    [JSON.stringify({ ...valid, txid: txid(1).toUpperCase().replace(/0/g, 'A') }), 'txid', /64 lowercase hex/],
    [JSON.stringify({ ...valid, txid: 'ab' }), 'txid', /64 lowercase hex/],
    [JSON.stringify({ signal: 'DAHSET', height: 1 }), 'txid', /64 lowercase hex/],
    [JSON.stringify({ ...valid, signal: 'DELETE' }), 'signal', /expected one of DAHSET, DAHUNSET, .*, CREATING$/],
    [JSON.stringify({ ...valid, height: -1 }), 'height', /^height: expected a non-negative integer$/],
    [JSON.stringify({ ...valid, height: 1.5 }), 'height', /non-negative integer/],
    [JSON.stringify({ ...valid, height: '100' }), 'height', /non-negative integer/],
    [JSON.stringify({ ...valid, height: 2 ** 53 }), 'height', /non-negative integer/],
    [JSON.stringify({ txid: txid(1), signal: 'DAHSET' }), 'height', /non-negative integer/],
  ])('%s -> InvalidArgumentError on %s', (body, field, problem) => {
    const err = thrown(() => parseSignalMessage(body));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).details.field).toBe(field);
    expect((err as Error).message.startsWith(`${field}: `)).toBe(true);
    expect((err as Error).message).toMatch(problem);
  });
});

describe('InlineQueue', () => {
  function recordingLogger() {
    const lines: { level: string; message: string; details?: Record<string, unknown> }[] = [];
    const logger: SignalLogger = {
      warn: (message, details) => lines.push({ level: 'warn', message, details }),
      error: (message, details) => lines.push({ level: 'error', message, details }),
    };
    return { lines, logger };
  }

  test('each signal is handled in order, one at a time, before send resolves', async () => {
    const events: string[] = [];
    const handler: SignalHandler = {
      handle: async (s) => {
        events.push(`start ${s.height}`);
        await new Promise((r) => setTimeout(r, 5 - (s.height % 3)));
        events.push(`end ${s.height}`);
      },
    };
    const q = new InlineQueue({ handler });
    expect(q.kind).toBe('inline');
    await q.send(signals(3));
    expect(events).toEqual(['start 1000', 'end 1000', 'start 1001', 'end 1001', 'start 1002', 'end 1002']);
  });

  test('concurrent sends are handled one after another in send order, and each send waits for its own', async () => {
    const handled: number[] = [];
    const q = new InlineQueue();
    q.setHandler({
      handle: async (s) => {
        await new Promise((r) => setTimeout(r, 2));
        handled.push(s.height);
      },
    });
    const [a, b] = [signals(2), signals(4).slice(2)];
    const first = q.send(a);
    const second = q.send(b).then(() => [...handled]);
    await first;
    expect(await second).toEqual([1000, 1001, 1002, 1003]);
  });

  test('a send from inside the handler is queued behind the current signal (no deadlock)', async () => {
    const handled: string[] = [];
    const q = new InlineQueue();
    q.setHandler({
      handle: async (s) => {
        handled.push(`${s.signal} ${s.height}`);
        if (s.signal === 'ALLSPENT') await q.send([{ ...s, signal: 'DAHSET' }]);
      },
    });
    await q.send([
      { txid: txid(1), signal: 'ALLSPENT', height: 5 },
      { txid: txid(2), signal: 'PRESERVE', height: 6 },
    ]);
    expect(handled).toEqual(['ALLSPENT 5', 'PRESERVE 6', 'DAHSET 5']);
    // a later drain (its async context turned off when the first one ended) tells the handler's sends apart again
    await q.send([{ txid: txid(3), signal: 'ALLSPENT', height: 7 }]);
    expect(handled.slice(3)).toEqual(['ALLSPENT 7', 'DAHSET 7']);
  });

  test('a failing handler is logged and swallowed; the following signals are still handled', async () => {
    const { lines, logger } = recordingLogger();
    const handled: number[] = [];
    const q = new InlineQueue({
      logger,
      handler: {
        handle: async (s) => {
          if (s.height === 1001) throw new Error('engine timeout');
          handled.push(s.height);
        },
      },
    });
    await expect(q.send(signals(3))).resolves.toBeUndefined();
    expect(handled).toEqual([1000, 1002]);
    expect(lines).toEqual([
      {
        level: 'error',
        message: expect.stringContaining('signal handler failed'),
        details: { txid: txid(2), signal: 'DAHSET', height: 1001, error: 'engine timeout' },
      },
    ]);
  });

  test('a handler throwing synchronously is swallowed too', async () => {
    const { lines, logger } = recordingLogger();
    const q = new InlineQueue({
      logger,
      handler: {
        handle: () => {
          throw new TypeError('boom');
        },
      },
    });
    await expect(q.send(signals(1))).resolves.toBeUndefined();
    expect(lines[0].details?.error).toBe('boom');
  });

  test('without a handler, signals are dropped with a warning and send resolves', async () => {
    const { lines, logger } = recordingLogger();
    const q = new InlineQueue({ logger });
    await expect(q.send(signals(2))).resolves.toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', details: { count: 2 } });
    await q.send([]);
    expect(lines).toHaveLength(1);
  });

  test('ping resolves', async () => {
    await expect(new InlineQueue().ping()).resolves.toBeUndefined();
  });
});

describe('createSignalQueue', () => {
  test('inline', () => {
    const handled: Signal[] = [];
    const q = createSignalQueue('inline', { handler: { handle: async (s) => void handled.push(s) } });
    expect(q).toBeInstanceOf(InlineQueue);
    expect(q.kind).toBe('inline');
  });

  test('an SQS queue URL, with the region taken from the host', async () => {
    const q = createSignalQueue(QUEUE_URL);
    expect(q).toBeInstanceOf(SqsQueue);
    expect(q.kind).toBe('sqs');
    expect((q as SqsQueue).queueUrl).toBe(QUEUE_URL);
    answer(() => undefined);
    await q.send(signals(1));
    const client = sqs.commandCalls(SendMessageBatchCommand)[0].thisValue as SQSClient;
    expect(await client.config.region()).toBe('eu-west-1');
  });

  test('a given client is used', async () => {
    const client = new SQSClient({ region: 'us-east-2' });
    answer(() => undefined);
    await createSignalQueue('https://vpce-1.sqs.us-east-2.vpce.amazonaws.com/123456789012/q.fifo', {
      sqsClient: client,
    }).send(signals(1));
    expect(sqs.commandCalls(SendMessageBatchCommand)[0].thisValue).toBe(client);
  });

  test.each([
    ['', /empty/],
    ['sqs', /neither "inline" nor a URL/],
    ['INLINE', /neither "inline" nor a URL/],
    ['http://sqs.eu-west-1.amazonaws.com/123456789012/q', /unsupported scheme http:/],
    ['https://sqs.eu-west-1.amazonaws.com/q', /12-digit account id/],
    ['https://sqs.eu-west-1.amazonaws.com/123456789012/q/x', /12-digit account id/],
    ['https://sqs.eu-west-1.amazonaws.com/123456789012/bad%20name', /bad queue name/],
    ['https://sqs.eu-west-1.amazonaws.com/123456789012/q?x=1', /no query/],
  ])('rejects %j naming SIGNAL_QUEUE', (spec, problem) => {
    const err = thrown(() => createSignalQueue(spec));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(/^SIGNAL_QUEUE: /);
    expect((err as Error).message).toMatch(problem);
  });
});
