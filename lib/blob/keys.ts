/**
 * Blob keys (docs/records.md): `<prefix>/<txid display hex>.tx` or `.outputs`.
 */
import { InvalidArgumentError } from '../domain/errors';
import type { BlobKind } from './port';

const TXID_HEX = /^[0-9a-f]{64}$/;
const KINDS: readonly BlobKind[] = ['tx', 'outputs'];

/** `<txid>.<kind>`, after checking that txid is 64 lowercase hex chars (it becomes part of a path or S3 key). */
export function blobName(txid: string, kind: BlobKind): string {
  if (typeof txid !== 'string' || !TXID_HEX.test(txid)) {
    throw new InvalidArgumentError('txid', `expected 64 lowercase hex characters, got ${JSON.stringify(txid)}`);
  }
  if (!KINDS.includes(kind)) {
    throw new InvalidArgumentError('kind', `expected "tx" or "outputs", got ${JSON.stringify(kind)}`);
  }
  return `${txid}.${kind}`;
}

/** A prefix without leading or trailing slashes ('' for none). */
export function normalizePrefix(prefix: string | undefined): string {
  return (prefix ?? '').replace(/^\/+|\/+$/g, '');
}

/** The deleteAtHeight value as stored in a tag or sidecar, validated both ways. */
export function formatDeleteAtHeight(height: number): string {
  if (!Number.isSafeInteger(height) || height < 0) {
    throw new InvalidArgumentError('deleteAtHeight', `expected a non-negative integer, got ${height}`);
  }
  return String(height);
}

/** Parses a stored deleteAtHeight; anything but a non-negative decimal integer reads as absent. */
export function parseDeleteAtHeight(text: string | undefined): number | null {
  if (text === undefined) return null;
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) ? value : null;
}
