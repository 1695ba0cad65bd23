/**
 * A small SQS on loopback speaking what the AWS SDK v3 client sends (@aws-sdk/client-sqs 3.1169: the AWS JSON 1.0
 * protocol, POST / with `X-Amz-Target: AmazonSQS.<Operation>` and `Content-Type: application/x-amz-json-1.0`,
 * errors as `{"__type": "com.amazonaws.sqs#<Code>", "message"}` with the query-compatible
 * `x-amzn-query-error` header). Queues are created from the template's AWS::SQS::Queue resources (visibility timeout,
 * redrive policy). A request must be SigV4-signed (Authorization header) like a real one; credentials are not
 * checked. The event source mapping stand-in reads the queues in-process (receive / delete / release).
 */
import { createHash, randomUUID } from 'node:crypto';
import * as http from 'node:http';

export interface QueueSpec {
  name: string;
  arn: string;
  visibilityTimeoutSeconds: number;
  /** the DLQ's name and the receive count after which a message moves there */
  redrive?: { deadLetterQueue: string; maxReceiveCount: number };
}

export interface StoredMessage {
  messageId: string;
  body: string;
  md5OfBody: string;
  sentTimestamp: number;
  firstReceiveTimestamp?: number;
  receiveCount: number;
  receiptHandle?: string;
  /** not visible before this time (ms) */
  invisibleUntil: number;
  senderId: string;
  messageAttributes: Record<string, unknown>;
}

interface Queue {
  spec: QueueSpec;
  messages: StoredMessage[];
}

class SqsError extends Error {
  constructor(
    readonly code: string,
    readonly queryCode: string,
    message: string,
  ) {
    super(message);
  }
}

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');

export class SqsStandIn {
  private readonly queues = new Map<string, Queue>();
  private readonly server: http.Server;
  /** every operation the functions called, for the run's report */
  readonly calls: string[] = [];

  constructor(
    specs: QueueSpec[],
    private readonly port: number,
    private readonly accountId: string,
  ) {
    for (const spec of specs) this.queues.set(spec.name, { spec, messages: [] });
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => resolve());
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Visible messages (at most max), made invisible for the queue's visibility timeout, receive count + 1. */
  receive(name: string, max: number): StoredMessage[] {
    const q = this.queue(name);
    const now = Date.now();
    const out: StoredMessage[] = [];
    for (const m of [...q.messages]) {
      if (out.length >= max) break;
      if (m.invisibleUntil > now) continue;
      if (q.spec.redrive && m.receiveCount >= q.spec.redrive.maxReceiveCount) {
        // the redrive policy: past maxReceiveCount the message moves to the DLQ instead of being received
        q.messages.splice(q.messages.indexOf(m), 1);
        this.queue(q.spec.redrive.deadLetterQueue).messages.push({ ...m, invisibleUntil: 0 });
        continue;
      }
      m.receiveCount++;
      m.firstReceiveTimestamp ??= now;
      m.receiptHandle = randomUUID();
      m.invisibleUntil = now + q.spec.visibilityTimeoutSeconds * 1000;
      out.push(m);
    }
    return out;
  }

  delete(name: string, receiptHandle: string): void {
    const q = this.queue(name);
    q.messages = q.messages.filter((m) => m.receiptHandle !== receiptHandle);
  }

  /** Makes a received message visible again now (what a failed batch item becomes after its visibility timeout). */
  release(name: string, receiptHandle: string): void {
    for (const m of this.queue(name).messages) if (m.receiptHandle === receiptHandle) m.invisibleUntil = 0;
  }

  depth(name: string): number {
    return this.queue(name).messages.length;
  }

  private queue(name: string): Queue {
    const q = this.queues.get(name);
    if (!q) throw new SqsError('QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue', `no queue ${name}`);
    return q;
  }

  private queueOfUrl(url: unknown): Queue {
    if (typeof url !== 'string') throw new SqsError('InvalidAddress', 'InvalidAddress', 'QueueUrl is required');
    const m = /^https?:\/\/[^/]+\/(\d{12})\/([A-Za-z0-9_-]{1,80}(?:\.fifo)?)$/.exec(url);
    if (!m || m[1] !== this.accountId)
      throw new SqsError('QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue', `no queue at ${url}`);
    return this.queue(m[2]);
  }

  private send(q: Queue, body: unknown, attributes: unknown, sender: string): StoredMessage {
    if (typeof body !== 'string' || body === '')
      throw new SqsError('MissingParameter', 'MissingParameter', 'MessageBody is required');
    if (Buffer.byteLength(body) > 256 * 1024)
      throw new SqsError('InvalidParameterValue', 'InvalidParameterValue', 'message over 256 KiB');
    const m: StoredMessage = {
      messageId: randomUUID(),
      body,
      md5OfBody: md5(body),
      sentTimestamp: Date.now(),
      receiveCount: 0,
      invisibleUntil: 0,
      senderId: sender,
      messageAttributes: (attributes as Record<string, unknown>) ?? {},
    };
    q.messages.push(m);
    return m;
  }

  private operation(target: string, input: Record<string, unknown>, sender: string): unknown {
    switch (target) {
      case 'SendMessage': {
        const m = this.send(this.queueOfUrl(input.QueueUrl), input.MessageBody, input.MessageAttributes, sender);
        return { MessageId: m.messageId, MD5OfMessageBody: m.md5OfBody };
      }
      case 'SendMessageBatch': {
        const q = this.queueOfUrl(input.QueueUrl);
        const entries = (input.Entries ?? []) as Record<string, unknown>[];
        if (entries.length === 0 || entries.length > 10)
          throw new SqsError(
            entries.length === 0 ? 'EmptyBatchRequest' : 'TooManyEntriesInBatchRequest',
            'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
            `${entries.length} entries`,
          );
        const Successful = entries.map((e) => {
          const m = this.send(q, e.MessageBody, e.MessageAttributes, sender);
          return { Id: e.Id, MessageId: m.messageId, MD5OfMessageBody: m.md5OfBody };
        });
        return { Successful, Failed: [] };
      }
      case 'GetQueueAttributes': {
        const q = this.queueOfUrl(input.QueueUrl);
        return {
          Attributes: {
            QueueArn: q.spec.arn,
            ApproximateNumberOfMessages: String(q.messages.filter((m) => m.invisibleUntil <= Date.now()).length),
            ApproximateNumberOfMessagesNotVisible: String(
              q.messages.filter((m) => m.invisibleUntil > Date.now()).length,
            ),
            VisibilityTimeout: String(q.spec.visibilityTimeoutSeconds),
          },
        };
      }
      case 'GetQueueUrl': {
        const q = this.queue(String(input.QueueName));
        return { QueueUrl: `${this.endpoint}/${this.accountId}/${q.spec.name}` };
      }
      default:
        throw new SqsError('UnsupportedOperation', 'AWS.SimpleQueueService.UnsupportedOperation', `${target}`);
    }
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', ...headers });
        res.end(JSON.stringify(body));
      };
      try {
        const target = String(req.headers['x-amz-target'] ?? '');
        if (req.method !== 'POST' || !target.startsWith('AmazonSQS.'))
          throw new SqsError('InvalidAction', 'InvalidAction', `expected POST with X-Amz-Target AmazonSQS.*`);
        if (!String(req.headers['content-type'] ?? '').startsWith('application/x-amz-json-1.0'))
          throw new SqsError('InvalidParameterValue', 'InvalidParameterValue', 'expected application/x-amz-json-1.0');
        const auth = String(req.headers.authorization ?? '');
        const credential = /^AWS4-HMAC-SHA256 Credential=([^/]+)\//.exec(auth);
        if (!credential) throw new SqsError('MissingAuthenticationToken', 'MissingAuthenticationToken', 'unsigned');
        const op = target.slice('AmazonSQS.'.length);
        this.calls.push(op);
        const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        reply(200, this.operation(op, input, credential[1]));
      } catch (err) {
        const e =
          err instanceof SqsError ? err : new SqsError('InternalError', 'InternalError', (err as Error).message);
        reply(
          e.code === 'InternalError' ? 500 : 400,
          { __type: `com.amazonaws.sqs#${e.code}`, message: e.message },
          { 'x-amzn-query-error': `${e.queryCode};Sender` },
        );
      }
    });
  }
}
