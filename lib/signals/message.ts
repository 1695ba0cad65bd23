/**
 * The signal message body (docs/signals.md): JSON `{txid, signal, height}`. parseSignalMessage is what the
 * SQS-triggered function runs on every record; an invalid body is an InvalidArgumentError naming the field, so the
 * message is reported as failed (and lands in the DLQ after its retries) instead of being half-applied.
 */
import * as z from 'zod';
import { InvalidArgumentError } from '../domain/errors';
import { SIGNALS, type Signal } from './port';

const TXID_PROBLEM = 'expected 64 lowercase hex characters (display order)';
const HEIGHT_PROBLEM = 'expected a non-negative integer';

export const signalMessageSchema = z.object({
  txid: z.string({ error: TXID_PROBLEM }).regex(/^[0-9a-f]{64}$/, TXID_PROBLEM),
  signal: z.enum(SIGNALS, { error: `expected one of ${SIGNALS.join(', ')}` }),
  height: z.int({ error: HEIGHT_PROBLEM }).nonnegative({ error: HEIGHT_PROBLEM }),
});

/** The message body of a signal: exactly {txid, signal, height}. */
export function formatSignalMessage(signal: Signal): string {
  return JSON.stringify({ txid: signal.txid, signal: signal.signal, height: signal.height });
}

export function parseSignalMessage(body: string): Signal {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (err) {
    throw new InvalidArgumentError('body', `signal message is not JSON: ${(err as Error).message}`);
  }
  const parsed = signalMessageSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
  const problem = issue.path.length > 0 ? issue.message : `signal message: ${issue.message}`;
  throw new InvalidArgumentError(field, problem);
}
