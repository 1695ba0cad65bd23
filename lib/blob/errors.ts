/**
 * Errors of the blob store adapters. A create-only conflict is `BlobConflictError` (port.ts); any other failure of
 * the underlying storage (filesystem, S3) is a `BlobStoreError` naming the operation and the key.
 */
export class BlobStoreError extends Error {
  constructor(
    readonly operation: string,
    readonly key: string,
    cause: unknown,
  ) {
    super(`blob store ${operation} of ${key} failed: ${describe(cause)}`, { cause });
    this.name = 'BlobStoreError';
  }
}

function describe(cause: unknown): string {
  if (cause instanceof Error) return cause.message || cause.name;
  return String(cause);
}
