/**
 * UtxoStoreClient: one method per operation of the API, typed from the route table (operations.ts) and the batch
 * routes (batch-routes.ts), over any transport (local HTTP, SigV4 HTTPS, direct Lambda invocation), with typed
 * errors (errors.ts), safe retries (retry.ts), automatic batching of single calls (batcher.ts) and block-size jobs
 * (jobs.ts).
 */
import { Batcher, type BatcherOptions, type ItemResult } from './batcher.js';
import {
  BATCH_OPERATIONS,
  decodeBatchResponse,
  type BatchOperationId,
  type BatchSpendRequest,
  type BatchTypes,
  type PreviousOutput,
} from './batch-routes.js';
import { encodeBatchFrame } from './binary-batch.js';
import { ApiError, errorFromResponse, isApiError } from './errors.js';
import { chunkItems, DEFAULT_MAX_REQUEST_BYTES, runChunks, type JobOptions } from './jobs.js';
import {
  OPERATIONS,
  type CleanupReport,
  type ProcessConflictingResult,
  type UnminedTxsPage,
  type CreateResult,
  type CreateTxRequest,
  type Endpoint,
  type HealthReport,
  type OperationId,
  type OperationRequest,
  type OperationResponse,
  type Outpoint,
  type SetMinedResult,
  type SpendItem,
  type SpendResult,
  type TxView,
  type UnminedPage,
  type UtxoStatus,
} from './operations.js';
import { withRetries, type RetryOptions } from './retry.js';
import type { Transport, TransportRequest, TransportResponse } from './transport.js';

/** Which single calls are batched automatically, and how. */
export interface BatchingOptions extends BatcherOptions {
  /** spend(tx) through POST /v1/batch/spends; default true */
  spend?: boolean;
  /** createTx(tx) through POST /v1/batch/txs; default true */
  create?: boolean;
  /** getTx(txid) through POST /v1/batch/get; default true */
  get?: boolean;
  /** getUtxo(txid, vout) through POST /v1/batch/utxos; default true */
  getUtxo?: boolean;
}

export interface ClientOptions {
  transport: Transport;
  /** default: 4 attempts, 50 ms .. 2 s full jitter; `{attempts: 1}` disables retries */
  retry?: RetryOptions;
  /**
   * Automatic batching of single calls (default on, as Teranode's batchers): options to tune it, `false` to send
   * each call as its own request.
   */
  batching?: boolean | BatchingOptions;
  /**
   * Send the write batches (createMany, spendMany, and the automatic batches of createTx and spend) as a binary frame
   * (application/octet-stream, binary-batch.ts: the txs' bytes, not their hex: about half the bytes on the wire);
   * default true. `false` sends them as JSON.
   */
  binaryBatches?: boolean;
}

export type SpendOptions = Omit<BatchSpendRequest, 'txs' | 'brief'>;
/** `brief`: a write batch answers each item that succeeded by its status alone (its value is then undefined). */
export interface BriefOption {
  brief: true;
}
export type CreateOptions = Omit<CreateTxRequest, 'tx'>;
export interface MinedBlock {
  blockId: number;
  blockHeight: number;
  subtreeIdx: number;
  onLongestChain?: boolean;
  unsetMined?: boolean;
}

type Key = string;

export class UtxoStoreClient {
  readonly transport: Transport;
  private readonly retry: RetryOptions;
  private readonly batching: (BatchingOptions & { enabled: boolean }) | undefined;
  private readonly binaryBatches: boolean;
  private readonly spendBatchers = new Map<Key, Batcher<string, SpendResult>>();
  private readonly getBatchers = new Map<Key, Batcher<string, TxView>>();
  private createBatcher: Batcher<CreateTxRequest, CreateResult> | undefined;
  private utxoBatcher: Batcher<{ txid: string; vout: number; utxoHash?: string }, UtxoStatus> | undefined;

  constructor(options: ClientOptions) {
    this.transport = options.transport;
    this.retry = options.retry ?? {};
    const b = options.batching ?? true;
    this.batching = b ? { ...(b === true ? {} : b), enabled: true } : undefined;
    this.binaryBatches = options.binaryBatches ?? true;
  }

  // ---- the generic call ---------------------------------------------------------------------------------------

  /** Any operation of the route table, typed by its schemas: `call('getTx', {params: {txid}})`. */
  async call<Id extends OperationId>(operation: Id, request: OperationRequest<Id>): Promise<OperationResponse<Id>> {
    const res = await this.send(operation, OPERATIONS[operation], request as RawRequest);
    return res.body as OperationResponse<Id>;
  }

  /** One batch route: the outcome of each item, in order (per-item errors are results, not exceptions). */
  async batch<Op extends BatchOperationId>(
    operation: Op,
    body: BatchTypes[Op]['request'],
  ): Promise<ItemResult<BatchTypes[Op]['item']>[]> {
    const count = batchItemCount(operation, body);
    const binary =
      this.binaryBatches && (operation === 'createMany' || operation === 'spendMany')
        ? encodeBatchFrame(operation, body as BatchTypes['createMany' | 'spendMany']['request'])
        : undefined;
    const res = await this.send(operation, BATCH_OPERATIONS[operation], { body, binary });
    return decodeBatchResponse<BatchTypes[Op]['item']>(res.body, count, operation);
  }

  private async send(
    operation: string,
    endpoint: Endpoint,
    request: RawRequest,
    accept?: (res: TransportResponse) => boolean,
  ): Promise<TransportResponse> {
    const req: TransportRequest = {
      operation,
      method: endpoint.method,
      path: endpoint.path,
      fn: endpoint.fn,
      pathParameters: request.params,
      query: dropUndefined(request.query),
      body: request.body,
      ...(request.binary !== undefined && { binary: request.binary }),
    };
    return withRetries(operation, endpoint.idempotent, this.retry, async () => {
      const res = await this.transport.send(req);
      if (res.status >= 400 && !accept?.(res)) throw errorFromResponse(res.status, res.body, operation);
      return res;
    });
  }

  // ---- transactions -------------------------------------------------------------------------------------------

  /** Stores a tx (EF hex when it has inputs). Batched automatically when batching is on. */
  createTx(tx: string, options: CreateOptions = {}): Promise<CreateResult> {
    if (this.batched('create')) {
      this.createBatcher ??= this.newBatcher((txs) => this.batch('createMany', { txs }));
      return this.createBatcher.submit({ tx, ...options });
    }
    return this.call('createTx', { body: { tx, ...options } });
  }

  /** Reads a tx record (default fields, or those named). Batched automatically when batching is on. */
  getTx(txid: string, fields?: string[]): Promise<TxView> {
    if (this.batched('get')) {
      const key = fields ? fields.join(',') : '';
      let batcher = this.getBatchers.get(key);
      if (!batcher) {
        batcher = this.newBatcher((txids) => this.batch('getMany', { txids, ...(fields ? { fields } : {}) }));
        this.getBatchers.set(key, batcher);
      }
      return batcher.submit(txid);
    }
    return this.call('getTx', { params: { txid }, query: fields ? { fields: fields.join(',') } : {} });
  }

  deleteTx(txid: string): Promise<void> {
    return this.call('deleteTx', { params: { txid } });
  }

  // ---- spends -------------------------------------------------------------------------------------------------

  /**
   * Spends every input of a tx (EF hex), all or nothing. Batched automatically when batching is on (calls with the
   * same options share batches). A failed input throws a ConflictError (or NotFoundError) with details.spends.
   */
  spend(tx: string, options: SpendOptions = {}): Promise<SpendResult> {
    if (this.batched('spend')) {
      const key = JSON.stringify([options.ignoreConflicting, options.ignoreLocked, options.blockHeight]);
      let batcher = this.spendBatchers.get(key);
      if (!batcher) {
        batcher = this.newBatcher((txs) => this.batch('spendMany', { txs, ...options }));
        this.spendBatchers.set(key, batcher);
      }
      return batcher.submit(tx);
    }
    return this.call('spend', { body: { tx, ...options } });
  }

  /** Explicit spends (outpoint, UTXO hash, spender), all or nothing; never batched. */
  spendOutputs(spends: SpendItem[], options: SpendOptions = {}): Promise<SpendResult> {
    return this.call('spend', { body: { spends, ...options } });
  }

  /** flagAsLocked: the unspent parents stay locked (not spendable) until setLocked(..., false). */
  async unspend(spends: SpendItem[], options: { blockHeight?: number; flagAsLocked?: boolean } = {}): Promise<void> {
    await this.call('unspend', { body: { spends, ...options } });
  }

  // ---- outputs ------------------------------------------------------------------------------------------------

  /** Spendability of one output at the chain tip + 1. Batched automatically when batching is on. */
  getUtxo(txid: string, vout: number, utxoHash?: string): Promise<UtxoStatus> {
    if (this.batched('getUtxo')) {
      this.utxoBatcher ??= this.newBatcher((utxos) => this.batch('getUtxoMany', { utxos }));
      return this.utxoBatcher.submit(utxoHash === undefined ? { txid, vout } : { txid, vout, utxoHash });
    }
    return this.call('getUtxo', {
      params: { txid, vout: String(vout) },
      query: utxoHash === undefined ? {} : { utxoHash },
    });
  }

  async freeze(utxos: Outpoint[]): Promise<void> {
    await this.call('freeze', { body: { utxos } });
  }

  async unfreeze(utxos: Outpoint[]): Promise<void> {
    await this.call('unfreeze', { body: { utxos } });
  }

  async reassign(request: OperationRequest<'reassign'>['body']): Promise<void> {
    await this.call('reassign', { body: request });
  }

  // ---- tx flags and blocks ------------------------------------------------------------------------------------

  /** One setMined request (for a whole block use setMinedMany). */
  setMined(txids: string[], block: MinedBlock): Promise<SetMinedResult> {
    return this.call('setMined', { body: { txids, ...block } });
  }

  async setLocked(txids: string[], locked: boolean): Promise<void> {
    await this.call('setLocked', { body: { txids, locked } });
  }

  async setConflicting(txids: string[], conflicting: boolean): Promise<void> {
    await this.call('setConflicting', { body: { txids, conflicting } });
  }

  async preserve(txids: string[], untilHeight: number): Promise<void> {
    await this.call('preserve', { body: { txids, untilHeight } });
  }

  queryUnmined(options: { cutoff: number; limit?: number; cursor?: string }): Promise<UnminedPage> {
    return this.call('queryUnmined', {
      query: {
        cutoff: String(options.cutoff),
        ...(options.limit !== undefined ? { limit: String(options.limit) } : {}),
        ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
      },
    });
  }

  /** Every unmined tx with what block assembly needs, in createdAt order; pass the previous page's cursor. */
  iterateUnmined(options: { limit?: number; cursor?: string } = {}): Promise<UnminedTxsPage> {
    return this.call('iterateUnmined', {
      query: {
        ...(options.limit !== undefined ? { limit: String(options.limit) } : {}),
        ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
      },
    });
  }

  // ---- double spends and reorgs ---------------------------------------------------------------------------------

  /** The other txs that spend one of the outputs this tx spends. */
  async getCounterConflicting(txid: string): Promise<string[]> {
    return (await this.call('getCounterConflicting', { params: { txid } })).counterConflicting;
  }

  /** The conflicting children registered on this tx. */
  async getConflictingChildren(txid: string): Promise<string[]> {
    return (await this.call('getConflictingChildren', { params: { txid } })).conflictingChildren;
  }

  /** Marks txs on or off the longest chain (unminedSince only; their block lists are kept). */
  async setLongestChain(txids: string[], onLongestChain: boolean): Promise<void> {
    await this.call('setLongestChain', { body: { txids, onLongestChain } });
  }

  /** Double-spend resolution: each tx becomes the spender of its inputs; answers the displaced txs. Resumable. */
  processConflicting(txids: string[]): Promise<ProcessConflictingResult> {
    return this.call('processConflicting', { body: { txids } });
  }

  // ---- chain tip, health, cleanup -----------------------------------------------------------------------------

  async getChainTip(): Promise<number> {
    return (await this.call('getChainTip', {})).height;
  }

  /** Moves the tip forward by at most the server's MAX_TIP_ADVANCE blocks (400 naming height beyond). */
  async setChainTip(height: number): Promise<number> {
    return (await this.call('setChainTip', { body: { height } })).height;
  }

  /** Admin: sets the tip to any height, back (a reorg) or far forward. */
  async forceChainTip(height: number): Promise<number> {
    return (await this.call('forceChainTip', { body: { height } })).height;
  }

  /** The health report; a degraded service (503 with the report) is a report too, not an error. */
  async health(): Promise<HealthReport> {
    const res = await this.send('health', OPERATIONS.health, {}, (r) => r.status === 503 && isHealthReport(r.body));
    return res.body as HealthReport;
  }

  cleanup(maxSeconds?: number): Promise<CleanupReport> {
    return this.call('cleanup', maxSeconds === undefined ? {} : { body: { maxSeconds } });
  }

  // ---- batch routes (explicit) ---------------------------------------------------------------------------------

  /**
   * Creates many txs in one request; each item's outcome on its own. With `{brief: true}` a created tx's value is
   * undefined: the answer carries only the failures' details (less for the server to write and for this client to
   * read, for a block's worth of txs).
   */
  createMany(txs: CreateTxRequest[]): Promise<ItemResult<CreateResult>[]>;
  createMany(txs: CreateTxRequest[], options: BriefOption): Promise<ItemResult<undefined>[]>;
  async createMany(txs: CreateTxRequest[], options?: BriefOption): Promise<ItemResult<CreateResult | undefined>[]> {
    return briefly(await this.batch('createMany', { txs, ...options }), options);
  }

  /**
   * Spends all inputs of many txs in one request; each tx all or nothing, on its own. With `brief: true` a tx whose
   * inputs were all spent has the value undefined (a failed one still lists each input).
   */
  spendMany(txs: string[], options?: SpendOptions): Promise<ItemResult<SpendResult>[]>;
  spendMany(txs: string[], options: SpendOptions & BriefOption): Promise<ItemResult<undefined>[]>;
  async spendMany(
    txs: string[],
    options: SpendOptions & Partial<BriefOption> = {},
  ): Promise<ItemResult<SpendResult | undefined>[]> {
    return briefly(await this.batch('spendMany', { txs, ...options }), options);
  }

  /** Satoshis and locking script of each outpoint (to extend a raw tx to EF). */
  previousOutputs(outpoints: { txid: string; vout: number }[]): Promise<ItemResult<PreviousOutput>[]> {
    return this.batch('previousOutputs', { outpoints });
  }

  /** Spendability of many outputs in one request. */
  getUtxoMany(utxos: { txid: string; vout: number; utxoHash?: string }[]): Promise<ItemResult<UtxoStatus>[]> {
    return this.batch('getUtxoMany', { utxos });
  }

  // ---- block-size jobs ----------------------------------------------------------------------------------------

  /**
   * Marks any number of txids mined in a block: split into POST /v1/mined requests under the payload limit
   * (default 10,000 txids a request, about 0.7 MB, well inside the 29 s gateway timeout) run `concurrency` at a
   * time. Returns the block ids of each txid (a Map: a million keys in a plain object are slow to build).
   * setMined is idempotent: a job that failed (JobError) may be run again whole.
   */
  async setMinedMany(
    txids: readonly string[],
    block: MinedBlock,
    options: JobOptions = {},
  ): Promise<Map<string, number[]>> {
    const blockIds = new Map<string, number[]>();
    const chunks = chunkItems(txids, {
      maxItems: options.maxItemsPerRequest ?? 10_000,
      maxBytes: options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
      envelopeBytes: Buffer.byteLength(JSON.stringify({ txids: [], ...block })),
    });
    await runChunks(chunks, options, async (chunk) => {
      const result = await this.setMined(chunk, block);
      for (const txid in result.blockIds) blockIds.set(txid, result.blockIds[txid]);
    });
    return blockIds;
  }

  /**
   * Reads any number of tx records through POST /v1/batch/get: requests under the payload limit (default 1,000
   * txids each) run `concurrency` at a time; a request whose answer would be over 6 MB (413 RESPONSE_TOO_LARGE) is
   * split in halves and sent again, down to single txids. One outcome per txid, in order.
   */
  async getMany(txids: readonly string[], fields?: string[], options: JobOptions = {}): Promise<ItemResult<TxView>[]> {
    const results: ItemResult<TxView>[] = new Array(txids.length);
    const indexed = txids.map((txid, i) => ({ txid, i }));
    const chunks = chunkItems(indexed, {
      maxItems: options.maxItemsPerRequest ?? 1000,
      maxBytes: options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
      envelopeBytes: Buffer.byteLength(JSON.stringify({ txids: [], fields })),
      itemBytes: (item) => item.txid.length + 2,
    });
    const fetchChunk = async (chunk: { txid: string; i: number }[]): Promise<void> => {
      try {
        const out = await this.batch('getMany', { txids: chunk.map((c) => c.txid), ...(fields ? { fields } : {}) });
        out.forEach((r, k) => (results[chunk[k].i] = r));
      } catch (err) {
        if (isApiError(err, 'RESPONSE_TOO_LARGE') && chunk.length > 1) {
          const half = Math.ceil(chunk.length / 2);
          await fetchChunk(chunk.slice(0, half));
          await fetchChunk(chunk.slice(half));
          return;
        }
        if (err instanceof ApiError && err.code === 'RESPONSE_TOO_LARGE') {
          results[chunk[0].i] = { ok: false, error: err };
          return;
        }
        throw err;
      }
    };
    await runChunks(chunks, options, fetchChunk);
    return results;
  }

  // ---- lifecycle ----------------------------------------------------------------------------------------------

  /** Sends what the batchers hold now. */
  flush(): void {
    for (const b of this.batchers()) b.flush();
  }

  /** Waits for every batched call to finish, then releases the transport. */
  async close(): Promise<void> {
    await Promise.all(this.batchers().map((b) => b.drain()));
    await this.transport.close?.();
  }

  /** The automatic batchers (for stats and tests). */
  batchers(): Batcher<never, unknown>[] {
    return [
      ...this.spendBatchers.values(),
      ...this.getBatchers.values(),
      ...(this.createBatcher ? [this.createBatcher] : []),
      ...(this.utxoBatcher ? [this.utxoBatcher] : []),
    ] as unknown as Batcher<never, unknown>[];
  }

  private batched(kind: 'spend' | 'create' | 'get' | 'getUtxo'): boolean {
    return this.batching !== undefined && this.batching[kind] !== false;
  }

  private newBatcher<I, O>(send: (items: I[]) => Promise<ItemResult<O>[]>): Batcher<I, O> {
    return new Batcher<I, O>(send, this.batching);
  }
}

interface RawRequest {
  params?: Record<string, string>;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** the body as a binary batch frame */
  binary?: Uint8Array;
}

function dropUndefined(query: Record<string, string | undefined> | undefined): Record<string, string> | undefined {
  if (!query) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (v !== undefined) out[k] = v;
  return Object.keys(out).length > 0 ? out : undefined;
}

function batchItemCount(operation: BatchOperationId, body: BatchTypes[BatchOperationId]['request']): number {
  const list =
    operation === 'createMany' || operation === 'spendMany'
      ? (body as { txs: unknown[] }).txs
      : operation === 'getMany'
        ? (body as { txids: unknown[] }).txids
        : operation === 'previousOutputs'
          ? (body as { outpoints: unknown[] }).outpoints
          : (body as { utxos: unknown[] }).utxos;
  return list.length;
}

/** A brief answer's successes carry no value (the server sent `{status}` alone). */
function briefly<T>(results: ItemResult<T>[], options?: Partial<BriefOption>): ItemResult<T | undefined>[] {
  if (options?.brief !== true) return results;
  return results.map((r) => (r.ok ? { ok: true, value: undefined } : r));
}

function isHealthReport(body: unknown): boolean {
  return body !== null && typeof body === 'object' && typeof (body as { status?: unknown }).status === 'string';
}
