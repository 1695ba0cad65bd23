/**
 * Bounded fan-out, shared by the store (blob reads of external txs) and cleanup (candidate deletes): `fn` over every
 * item, at most `limit` at a time, results in order. After a throw no further item starts; the first throw is
 * rethrown once the running ones have settled (no work left running behind a failure).
 */
export async function mapLimited<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.err;
  return results;
}
