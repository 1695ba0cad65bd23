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
import { parseTx, type ParsedTx } from '../domain/tx';
import { listArg, optionalBoolArg, optionalIntArg } from './args';
import { asItemError, settleItem, unwrap, type ItemResult } from './batch';
import { checkCallerHeight, checkCoinbaseHeight, type StoreContext } from './context';
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
import type { CreateItem, CreateOptions, CreateResult, MinedBlock } from './types';
import { storageError } from './udf-call';

/**
 * A tx of the batch once prepared: what the later steps and the answer need. A single-record tx's parsed inputs and
 * outputs are not kept: the plan holds the bytes that are stored, and a block's parsed txs kept alive while the
 * engine writes were a large part of the request's heap (the garbage collector copies every live young object). Only
 * the txs whose later steps read them keep them (multi-record, conflicting); a tx refused RECORD_TOO_BIG is parsed
 * again from its bytes.
 */
interface TxCreate {
  tx?: CreatedTx;
  parsed?: ParsedTx;
  options?: RecordOptions;
  plan?: RecordPlan;
  error?: UtxoStoreError;
}

interface CreatedTx {
  txid: Buffer;
  txidHex: string;
  fee: number;
  sizeInBytes: number;
  extendedSize: number;
  /** the tx as it came (hex decoded): parsed again only on the rare paths above */
  bytes: Buffer;
}

const live = (c: TxCreate): boolean => c.error === undefined && c.plan !== undefined;

export function createMany(ctx: StoreContext, items: CreateItem[]): Promise<ItemResult<CreateResult>[]> {
  // not an async function: its parameter would keep the request's items alive until the last step
  return prepareAll(ctx, items).then((txs) => createPrepared(ctx, txs));
}

async function createPrepared(ctx: StoreContext, txs: TxCreate[]): Promise<ItemResult<CreateResult>[]> {
  refuseDuplicates(txs);
  const multi = txs
    .filter((c) => live(c) && c.plan!.records.length > 1)
    .map((c): [TxCreate, PaginatedCreate] => [c, { parsed: parsedOf(c), plan: c.plan!, height: c.options!.height }]);
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
    const { tx, plan } = c as Required<TxCreate>;
    return {
      ok: true,
      value: {
        txid: tx.txidHex,
        fee: tx.fee,
        sizeInBytes: tx.sizeInBytes,
        extendedSize: tx.extendedSize,
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

/**
 * Step 1: each tx parsed and checked with its options, then planned at its creation height: the tip, read once unless
 * every tx gives its own height, and read while the txs are parsed (the read's round trip under the parsing's CPU;
 * awaiting it before parsing left the request idle behind other requests' engine batches: measured slower). A tx's own
 * blockHeight is bounded like the tip (at most MAX_TIP_ADVANCE above it; that tx alone fails, naming blockHeight),
 * against the same single read.
 */
async function prepareAll(ctx: StoreContext, list: CreateItem[]): Promise<TxCreate[]> {
  const items = listArg<CreateItem>(list, 'txs');
  const bounded = ctx.settings.maxTipAdvance !== undefined;
  const needsTip = items.some((item) => bounded || item?.options?.blockHeight === undefined);
  const tipRead = needsTip ? ctx.tip().catch(asItemError) : undefined;
  const parsed = items.map((item) => parseItem(item));
  const tip = await tipRead;
  return parsed.map((p) => (p instanceof ParsedItem ? planItem(ctx, p, tip) : { error: p }));
}

/** A tx checked with its options, not yet planned. */
class ParsedItem {
  constructor(
    readonly parsed: ParsedTx,
    readonly isCoinbase: boolean,
    readonly minedBlocks: MinedBlock[],
    readonly own: number | undefined,
    readonly locked: boolean,
    readonly conflicting: boolean,
  ) {}
}

function parseItem(item: CreateItem): ParsedItem | UtxoStoreError {
  try {
    if (item === null || typeof item !== 'object') throw new InvalidArgumentError('tx', 'expected {tx, options}');
    const options = item.options ?? {};
    const { parsed, isCoinbase } = parseForCreate(item.tx, options);
    return new ParsedItem(
      parsed,
      isCoinbase,
      minedBlocksArg(options.minedBlocks),
      optionalIntArg(options.blockHeight, 'blockHeight'),
      optionalBoolArg(options.locked, 'locked'),
      optionalBoolArg(options.conflicting, 'conflicting'),
    );
  } catch (err) {
    return asItemError(err);
  }
}

/**
 * One tx's height (its own, or the tip) and record plan. What is kept of it from here is what the later steps and
 * the answer read (TxCreate): its parsed inputs and outputs only when a later step reads them.
 */
function planItem(ctx: StoreContext, p: ParsedItem, tip: number | UtxoStoreError | undefined): TxCreate {
  const { parsed, own, conflicting } = p;
  const height = own ?? tip;
  if (typeof height !== 'number') return { error: height as UtxoStoreError };
  try {
    if (own !== undefined && ctx.settings.maxTipAdvance !== undefined) {
      if (typeof tip !== 'number') return { error: tip as UtxoStoreError };
      checkCallerHeight('blockHeight', own, tip, ctx.settings.maxTipAdvance);
      if (p.isCoinbase && p.minedBlocks.length === 0)
        checkCoinbaseHeight('blockHeight', own, tip, ctx.settings.maxTipAdvance);
    }
    const options: RecordOptions = {
      height,
      isCoinbase: p.isCoinbase,
      minedBlocks: p.minedBlocks,
      locked: p.locked,
      conflicting,
      createdAt: ctx.now(),
      external: needsExternal(parsed, ctx.settings),
    };
    const recordPlan = planRecords(parsed, ctx.settings, options);
    const tx: CreatedTx = {
      txid: parsed.txid,
      txidHex: parsed.txidHex,
      fee: parsed.fee,
      sizeInBytes: parsed.sizeInBytes,
      extendedSize: parsed.extendedSize,
      bytes: parsed.ef ?? parsed.raw,
    };
    const kept = recordPlan.records.length > 1 || conflicting ? parsed : undefined;
    return { tx, parsed: kept, options, plan: recordPlan };
  } catch (err) {
    return { error: asItemError(err) };
  }
}

/** The parsed tx: kept, or parsed again from its bytes (checked once already, so this cannot fail). */
function parsedOf(c: TxCreate): ParsedTx {
  return c.parsed ?? parseTx(c.tx!.bytes);
}

/** Step 2: the same txid twice in one batch: the first is created, the others are TX_EXISTS. */
function refuseDuplicates(txs: TxCreate[]): void {
  const seen = new Set<string>();
  for (const c of txs.filter(live)) {
    const txid = c.tx!.txidHex;
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
        const r = await settleItem(() => putBlob(ctx, c.tx!.txidHex, c.plan!));
        if (!r.ok) c.error = r.error;
      }),
  );
  const ready = txs.filter(live);
  const pages = paginationRecords(paginated);
  const all = await createChunked(ctx, [
    ...ready.map((c) => ({ key: masterKey(c.tx!.txid), bins: c.plan!.records[0] })),
    ...pages,
  ]);
  settlePaginationWrites(pages, all.slice(ready.length));
  const results = all.slice(0, ready.length);
  const tooBig: TxCreate[] = [];
  results.forEach((r, i) => {
    const c = ready[i];
    if (r.ok) return;
    const txid = c.tx!.txidHex;
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
  const parsed = parsedOf(c);
  c.plan = planRecords(parsed, ctx.settings, { ...c.options!, external: true });
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
      await ctx.blobs.setDeleteAtHeight(c.tx!.txidHex, blob.kind, dah).catch((err) => {
        c.error = storageError('tagging the blob with its deleteAtHeight failed', err, { txid: c.tx!.txidHex });
      });
    }),
  );
  const conflicting = txs.filter((c) => live(c) && c.options!.conflicting);
  const errors = await registerConflictingChildren(ctx, conflicting.map(parsedOf));
  conflicting.forEach((c, i) => (c.error ??= errors[i]));
  await Promise.all(
    txs
      .filter((c) => c.error instanceof TxExistsError && c.tx && c.options?.conflicting)
      .map(async (c) => {
        const r = await settleItem(() => registerExistingConflicting(ctx, parsedOf(c)));
        if (!r.ok) c.error = r.error;
      }),
  );
}
