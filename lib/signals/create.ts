/**
 * SIGNAL_QUEUE (docs/settings.md): `inline` (in-process, the default) or an SQS queue URL
 * (`https://sqs.<region>.amazonaws.com/<account>/<name>`, or a VPC endpoint URL of the same shape).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { InvalidArgumentError } from '../domain/errors';
import { InlineQueue, type SignalLogger } from './inline-queue';
import type { SignalHandler, SignalQueue } from './port';
import { SqsQueue } from './sqs-queue';

export interface CreateSignalQueueOptions {
  /** SQS client for queue URLs (default: a new SQSClient in the URL's region, else the default region) */
  sqsClient?: SQSClient;
  /** inline only: the handler (usually the reconciler; can be set later with setHandler) */
  handler?: SignalHandler;
  logger?: SignalLogger;
}

const FIELD = 'SIGNAL_QUEUE';
const EXPECTED = 'expected "inline" or an https SQS queue URL https://sqs.<region>.amazonaws.com/<account>/<queue>';

function invalid(spec: string, problem: string): InvalidArgumentError {
  return new InvalidArgumentError(FIELD, `${JSON.stringify(spec)}: ${problem} (${EXPECTED})`);
}

export function createSignalQueue(spec: string, options: CreateSignalQueueOptions = {}): SignalQueue {
  if (typeof spec !== 'string' || spec.trim() === '') throw invalid(String(spec), 'empty');
  if (spec === 'inline') return new InlineQueue({ handler: options.handler, logger: options.logger });

  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw invalid(spec, 'neither "inline" nor a URL');
  }
  if (url.protocol !== 'https:') throw invalid(spec, `unsupported scheme ${url.protocol}`);
  if (url.search || url.hash) throw invalid(spec, 'a queue URL has no query or fragment');
  const segments = url.pathname.split('/').filter(Boolean);
  if (segments.length !== 2 || !/^\d{12}$/.test(segments[0])) {
    throw invalid(spec, 'the path must be /<12-digit account id>/<queue name>');
  }
  if (!/^[A-Za-z0-9_-]{1,80}(\.fifo)?$/.test(segments[1])) throw invalid(spec, `bad queue name ${segments[1]}`);

  const region = /^sqs\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(url.hostname)?.[1];
  const client = options.sqsClient ?? new SQSClient(region ? { region } : {});
  return new SqsQueue({ client, queueUrl: spec });
}
