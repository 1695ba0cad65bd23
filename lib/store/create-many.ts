/**
 * Create (docs/operations.md), batched: many txs, each created or failed on its own. Read top-down:
 *   1. prepare each tx (parse, options, record plan)     a bad tx fails alone; the tip is read once per batch
 *   2. refuse a second copy of a txid in the batch        TX_EXISTS (the first one is created)
 *   3. multi-record txs (above B outputs): lock + blob    one batch read of masters, one batch of locks
 *   4. single records and pagination records: blobs, then create-only engine batches (all records of all txs)
 *   5. multi-record txs: masters, clear `creating`, unlock one engine batch per step (create.ts)
 *   6. tag blobs with their DAH, register conflicting txs in their parents (one engine batch)
 * A single create is the batch of one.
 */
import { InvalidArgumentError, StorageError, TxExistsError, type UtxoStoreError } from '../domain/errors';
import { masterKey } from '../domain/keys';
import type { ParsedTx } from '../domain/tx';
import { listArg, optionalBoolArg, optionalIntArg } from './args';
import { asItemError, settleItem, unwrap, type ItemResult } from './batch';
import { checkCallerHeight, type StoreContext } from './context';
import {
  completePaginated,
  createChunked,
  createSingle,
  lockPaginated,
  paginationRecords,
  settlePaginationWrites,
  type PaginatedCreate,
  minedBlocksArg,
  parseForCreate,
  putBlob,
  registerConflictingChildren,
  registerExistingConflicting,
} from './create';
import { needsExternal, planRecords, type RecordOptions, type RecordPlan } from './records';
import type { CreateItem, CreateOptions, CreateResult } from './types';
import { storageError } from './udf-call';

interface TxCreate {
  parsed?: ParsedTx;
  options?: Omit<RecordOptions, 'height' | 'external'> & { height?: number };
  plan?: RecordPlan;
  error?: UtxoStoreError;
}

const live = (c: TxCreate): boolean => c.error === undefined && c.plan !== undefined;

export async function createMany(ctx: StoreContext, items: CreateItem[]): Promise<ItemResult<CreateResult>[]> {
  const txs = listArg<CreateItem>(items, 'txs').map((item) => prepare(ctx, item));
  await planAll(ctx, txs);
  refuseDuplicates(txs);
  const multi = txs
    .filter((c) => live(c) && c.plan!.records.length > 1)
    .map((c): [TxCreate, PaginatedCreate] => [c, { parsed: c.parsed!, plan: c.plan!, height: c.options!.height! }]);
  const paginated = multi.map(([, p]) => p);
  await lockPaginated(ctx, paginated);
  try {
    await createRecords(
      ctx,
      txs.filter((c) => live(c) && c.plan!.records.length === 1),
      paginated,
    );
  } finally {
    await completePaginated(ctx, paginated);
  }
  for (const [c, p] of multi) if (p.error) c.error = p.error;
  await finish(ctx, txs);
  return txs.map((c): ItemResult<CreateResult> => {
    if (c.error) return { ok: false, error: c.error };
    const { parsed, plan } = c as Required<TxCreate>;
    return {
      ok: true,
      value: {
        txid: parsed.txidHex,
        fee: parsed.fee,
        sizeInBytes: parsed.sizeInBytes,
        extendedSize: parsed.extendedSize,
        external: plan.external,
        records: plan.records.length,
      },
    };
  });
}

export async function create(
  ctx: StoreContext,
  tx: string | Buffer,
  options: CreateOptions = {},
): Promise<CreateResult> {
  const [result] = await createMany(ctx, [{ tx, options }]);
  return unwrap(result);
}

/** Step 1a: parse and validate one tx and its options (no I/O). */
function prepare(ctx: StoreContext, item: CreateItem): TxCreate {
  try {
    if (item === null || typeof item !== 'object') throw new InvalidArgumentError('tx', 'expected {tx, options}');
    const options = item.options ?? {};
    const { parsed, isCoinbase } = parseForCreate(item.tx, options);
    const minedBlocks = minedBlocksArg(options.minedBlocks);
    return {
      parsed,
      options: {
        height: optionalIntArg(options.blockHeight, 'blockHeight'),
        isCoinbase,
        minedBlocks,
        locked: optionalBoolArg(options.locked, 'locked'),
        conflicting: optionalBoolArg(options.conflicting, 'conflicting'),
        createdAt: ctx.now(),
      },
    };
  } catch (err) {
    return { error: asItemError(err) };
  }
}

/**
 * Step 1b: the creation height (the tip, read once, unless the tx gives its own) and the record plan. A tx's own
 * blockHeight is bounded like the tip (at most MAX_TIP_ADVANCE above it; that tx alone fails, naming blockHeight),
 * against the same single read.
 */
async function planAll(ctx: StoreContext, txs: TxCreate[]): Promise<void> {
  const ready = txs.filter((c) => c.error === undefined);
  const bounded = ctx.settings.maxTipAdvance !== undefined;
  let tip: number | UtxoStoreError | undefined;
  if (ready.some((c) => bounded || c.options!.height === undefined)) tip = await ctx.tip().catch(asItemError);
  for (const c of ready) {
    const own = c.options!.height;
    const height = own ?? tip;
    if (typeof height !== 'number') {
      c.error = height as UtxoStoreError;
      continue;
    }
    if (own !== undefined && bounded) {
      if (typeof tip !== 'number') {
        c.error = tip as UtxoStoreError;
        continue;
      }
      try {
        checkCallerHeight('blockHeight', own, tip, ctx.settings.maxTipAdvance);
      } catch (err) {
        c.error = asItemError(err);
        continue;
      }
    }
    c.options!.height = height;
    const parsed = c.parsed!;
    c.plan = planRecords(parsed, ctx.settings, {
      ...c.options!,
      height,
      external: needsExternal(parsed, ctx.settings),
    });
  }
}

/** Step 2: the same txid twice in one batch: the first is created, the others are TX_EXISTS. */
function refuseDuplicates(txs: TxCreate[]): void {
  const seen = new Set<string>();
  for (const c of txs.filter(live)) {
    const txid = c.parsed!.txidHex;
    if (seen.has(txid)) c.error = new TxExistsError(txid);
    seen.add(txid);
  }
}

/**
 * Step 4: blobs first (a record never points at a missing blob), then every single record and every pagination
 * record of the locked multi-record txs in the same create-only engine batches.
 */
async function createRecords(ctx: StoreContext, txs: TxCreate[], paginated: PaginatedCreate[]): Promise<void> {
  // only external txs have a blob: no promise per tx for the others (a batch holds up to MAX_BATCH_ITEMS)
  await Promise.all(
    txs
      .filter((c) => c.plan!.blob !== undefined)
      .map(async (c) => {
        const r = await settleItem(() => putBlob(ctx, c.parsed!.txidHex, c.plan!));
        if (!r.ok) c.error = r.error;
      }),
  );
  const ready = txs.filter(live);
  const pages = paginationRecords(paginated);
  const all = await createChunked(ctx, [
    ...ready.map((c) => ({ key: masterKey(c.parsed!.txid), bins: c.plan!.records[0] })),
    ...pages,
  ]);
  settlePaginationWrites(pages, all.slice(ready.length));
  const results = all.slice(0, ready.length);
  const tooBig: TxCreate[] = [];
  results.forEach((r, i) => {
    const c = ready[i];
    if (r.ok) return;
    const txid = c.parsed!.txidHex;
    if (r.error.code === 'RECORD_EXISTS') c.error = new TxExistsError(txid);
    else if (r.error.code === 'RECORD_TOO_BIG' && !c.plan!.external) tooBig.push(c);
    else if (r.error.code === 'RECORD_TOO_BIG') c.error = tooBigError(txid);
    else c.error = storageError('creating the record failed', r.error, { txid });
  });
  await Promise.all(tooBig.map((c) => createExternal(ctx, c)));
}

function tooBigError(txid: string): StorageError {
  return new StorageError('the record is too big even without the tx bytes', { txid });
}

/** The engine's record size limit is below maxTxSizeInStore for this tx: its bytes go to the blob store. */
async function createExternal(ctx: StoreContext, c: TxCreate): Promise<void> {
  const parsed = c.parsed!;
  c.plan = planRecords(parsed, ctx.settings, { ...c.options!, height: c.options!.height!, external: true });
  const r = await settleItem(async () => {
    await putBlob(ctx, parsed.txidHex, c.plan!);
    if ((await createSingle(ctx, masterKey(parsed.txid), c.plan!.records[0], parsed.txidHex)) === 'too-big') {
      throw tooBigError(parsed.txidHex);
    }
  });
  if (!r.ok) c.error = r.error;
}

/**
 * Step 6: a DAH set at creation (conflicting, or fully spent and mined) goes on the blob too; a conflicting tx is
 * registered in its parents (also when it exists already: a create that died before registering is retried).
 */
async function finish(ctx: StoreContext, txs: TxCreate[]): Promise<void> {
  const tagged = txs.filter((c) => live(c) && c.plan!.blob && typeof c.plan!.records[0].deleteAtHeight === 'number');
  await Promise.all(
    tagged.map(async (c) => {
      const dah = c.plan!.records[0].deleteAtHeight as number;
      const blob = c.plan!.blob!;
      await ctx.blobs.setDeleteAtHeight(c.parsed!.txidHex, blob.kind, dah).catch((err) => {
        c.error = storageError('tagging the blob with its deleteAtHeight failed', err, { txid: c.parsed!.txidHex });
      });
    }),
  );
  const conflicting = txs.filter((c) => live(c) && c.options!.conflicting);
  const errors = await registerConflictingChildren(
    ctx,
    conflicting.map((c) => c.parsed!),
  );
  conflicting.forEach((c, i) => (c.error ??= errors[i]));
  await Promise.all(
    txs
      .filter((c) => c.error instanceof TxExistsError && c.parsed && c.options?.conflicting)
      .map(async (c) => {
        const r = await settleItem(() => registerExistingConflicting(ctx, c.parsed!));
        if (!r.ok) c.error = r.error;
      }),
  );
}
