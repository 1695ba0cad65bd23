/**
 * The SQS signal queue (SIGNAL_QUEUE=<queue URL>): SendMessageBatch in batches of 10 (the SQS maximum), the
 * batches of one send in parallel. Entries SQS reports as failed are retried, alone, a few times with a short
 * backoff; entries failed by the sender's fault (invalid message) are not retried. Whatever still failed after
 * that is a SignalSendError naming the txids, so the store can report the request as to be retried.
 * A call that throws (after the SDK's own retries) counts as every entry of that batch failing.
 *
 * FIFO queues (URL ending in `.fifo`) get MessageGroupId = txid and a MessageDeduplicationId drawn per send (kept by
 * that send's retries): a content-based id would drop a signal raised again within SQS's 5-minute window (ALLSPENT,
 * NOTALLSPENT, ALLSPENT at one height), and the reconciler would never see the last state.
 */
import { randomBytes } from 'crypto';
import {
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { formatSignalMessage } from './message';
import type { Signal, SignalQueue } from './port';

export interface SqsQueueOptions {
  client: SQSClient;
  queueUrl: string;
  /** attempts per entry, the first included (default 3) */
  maxAttempts?: number;
  /** backoff before retry n is n x retryDelayMs (default 100) */
  retryDelayMs?: number;
}

export const SQS_BATCH_SIZE = 10;

export interface FailedSignal {
  signal: Signal;
  code: string;
  message: string;
}

export class SignalSendError extends Error {
  readonly failedTxids: string[];

  constructor(
    readonly failed: FailedSignal[],
    readonly queueUrl: string,
  ) {
    const txids = [...new Set(failed.map((f) => f.signal.txid))];
    const reasons = [...new Set(failed.map((f) => `${f.code}: ${f.message}`))].slice(0, 3).join('; ');
    super(`sending ${failed.length} signal(s) to ${queueUrl} failed for txids ${txids.join(', ')} (${reasons})`);
    this.name = 'SignalSendError';
    this.failedTxids = txids;
  }
}

export class SignalQueueUnavailableError extends Error {
  constructor(queueUrl: string, cause: unknown) {
    super(`signal queue ${queueUrl} is not reachable: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'SignalQueueUnavailableError';
  }
}

interface Attempt {
  signal: Signal;
  code: string;
  message: string;
  retryable: boolean;
}

export class SqsQueue implements SignalQueue {
  readonly kind = 'sqs';
  readonly queueUrl: string;
  private readonly client: SQSClient;
  private readonly fifo: boolean;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;

  constructor(options: SqsQueueOptions) {
    if (!options?.client) throw new TypeError('SqsQueue: options.client is required');
    if (typeof options.queueUrl !== 'string' || options.queueUrl === '') {
      throw new TypeError('SqsQueue: options.queueUrl must be the queue URL');
    }
    this.client = options.client;
    this.queueUrl = options.queueUrl;
    this.fifo = options.queueUrl.endsWith('.fifo');
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.retryDelayMs = Math.max(0, options.retryDelayMs ?? 100);
  }

  async send(signals: Signal[]): Promise<void> {
    const dedupIds = new Map<Signal, string>();
    if (this.fifo) {
      for (const signal of signals) {
        dedupIds.set(signal, randomBytes(32).toString('hex'));
      }
    }
    const failed: Attempt[] = [];
    let pending = signals;
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > 1) await sleep(this.retryDelayMs * (attempt - 1));
      const batches = chunk(pending, SQS_BATCH_SIZE);
      const failures = (await Promise.all(batches.map((batch) => this.sendBatch(batch, dedupIds)))).flat();
      failed.push(...failures.filter((f) => !f.retryable));
      const retry = failures.filter((f) => f.retryable);
      if (attempt >= this.maxAttempts) {
        failed.push(...retry);
        break;
      }
      pending = retry.map((f) => f.signal);
    }
    if (failed.length > 0) {
      throw new SignalSendError(
        failed.map(({ signal, code, message }) => ({ signal, code, message })),
        this.queueUrl,
      );
    }
  }

  async ping(): Promise<void> {
    try {
      await this.client.send(new GetQueueAttributesCommand({ QueueUrl: this.queueUrl, AttributeNames: ['QueueArn'] }));
    } catch (err) {
      throw new SignalQueueUnavailableError(this.queueUrl, err);
    }
  }

  /** Sends up to 10 signals; returns the ones that failed. */
  private async sendBatch(batch: Signal[], dedupIds: Map<Signal, string>): Promise<Attempt[]> {
    const entries = batch.map((signal, i) => this.entry(signal, i, dedupIds));
    try {
      const res = await this.client.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
      const succeeded = new Set((res.Successful ?? []).map((s) => s.Id));
      const reported = new Map((res.Failed ?? []).map((f) => [f.Id, f]));
      return batch.flatMap((signal, i): Attempt[] => {
        const id = String(i);
        if (succeeded.has(id)) return [];
        const f = reported.get(id);
        if (!f)
          return [{ signal, code: 'Unreported', message: 'SQS reported neither success nor failure', retryable: true }];
        return [{ signal, code: f.Code ?? 'Unknown', message: f.Message ?? '', retryable: !f.SenderFault }];
      });
    } catch (err) {
      const e = err as { name?: string; message?: string };
      return batch.map((signal) => ({
        signal,
        code: e?.name ?? 'Error',
        message: e?.message ?? String(err),
        retryable: true,
      }));
    }
  }

  private entry(signal: Signal, index: number, dedupIds: Map<Signal, string>): SendMessageBatchRequestEntry {
    const body = formatSignalMessage(signal);
    const entry: SendMessageBatchRequestEntry = { Id: String(index), MessageBody: body };
    if (this.fifo) {
      entry.MessageGroupId = signal.txid;
      entry.MessageDeduplicationId = dedupIds.get(signal);
    }
    return entry;
  }
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
