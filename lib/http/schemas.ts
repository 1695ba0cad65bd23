/**
 * Request and response schemas of the HTTP API (docs/api.md), with zod 4. Objects are strict (unknown fields
 * are rejected); txids and hashes are 64 hex characters in display order; numbers are non-negative integers.
 * The same schemas validate requests and generate the OpenAPI document (lib/http/openapi.ts).
 */
import * as z from 'zod';
import { RECORD_BINS } from '../domain/bins';
import { decodeHex } from '../domain/hex';

/** The body limit (Lambda's 6 MB invocation payload less a reserve for the event): see payload-limits.ts. */
export { MAX_BODY_BYTES } from './payload-limits';

/** Named schemas: the OpenAPI document's components (a registry of this module, not zod's global one). */
export const apiSchemas = z.registry<{ id: string; description?: string }>();

const HEX64 = /^[0-9a-fA-F]{64}$/;
const UINT32_MAX = 0xffffffff;
const NON_NEGATIVE = 'expected a non-negative integer';

export const txidSchema = z
  .string({ error: 'expected a 64-character hex txid' })
  .regex(HEX64, { error: 'expected a 64-character hex txid (display order)' })
  .meta({ description: 'txid, 64 hex characters, display (block explorer) order' });

export const hashSchema = z
  .string({ error: 'expected a 64-character hex hash' })
  .regex(HEX64, { error: 'expected a 64-character hex hash (display order)' })
  .meta({ description: 'UTXO hash, 64 hex characters, display order' });

export const uintSchema = z
  .int({ error: NON_NEGATIVE })
  .min(0, { error: NON_NEGATIVE })
  .max(UINT32_MAX, { error: `expected an integer from 0 to ${UINT32_MAX}` });

/** A tx is decoded here, once: the handlers pass its bytes on (no pattern scan of a block's txs before a decode). */
export const txHexSchema = z
  .string({ error: 'expected the transaction as hex' })
  .min(2, { error: 'expected the transaction as hex' })
  .transform((hex, ctx): Buffer => {
    const bytes = decodeHex(hex);
    if (bytes !== undefined) return bytes;
    ctx.issues.push({
      code: 'custom',
      message: 'expected the transaction as hex (an even number of hex digits)',
      input: hex,
    });
    return z.NEVER;
  })
  .meta({
    description: 'serialized transaction, hex; extended format (BIP-239) when it has inputs',
    pattern: '^(?:[0-9a-fA-F]{2})+$',
  });

const bool = z.boolean({ error: 'expected true or false' });

/** A non-negative integer in a query string or path segment. */
function uintString(max = UINT32_MAX, min = 0) {
  return z
    .string()
    .regex(/^\d{1,10}$/, { error: NON_NEGATIVE })
    .transform(Number)
    .pipe(
      z
        .int()
        .min(min, { error: `expected an integer from ${min} to ${max}` })
        .max(max, { error: `expected an integer from ${min} to ${max}` }),
    );
}

const txidList = z
  .array(txidSchema, { error: 'expected a list of txids' })
  .min(1, { error: 'expected at least one txid' });

// ---- requests -------------------------------------------------------------------------------------------------

export const minedBlockSchema = z.strictObject({
  blockId: uintSchema,
  blockHeight: uintSchema,
  subtreeIdx: uintSchema,
});

export const createBody = z
  .strictObject({
    tx: txHexSchema,
    blockHeight: uintSchema.optional(),
    minedBlocks: z.array(minedBlockSchema, { error: 'expected a list' }).optional(),
    isCoinbase: bool.optional(),
    locked: bool.optional(),
    conflicting: bool.optional(),
  })
  .register(apiSchemas, { id: 'CreateRequest' });

export const spendItemSchema = z
  .strictObject({
    txid: txidSchema,
    vout: uintSchema,
    utxoHash: hashSchema,
    spendingTxid: txidSchema,
    vin: uintSchema,
  })
  .register(apiSchemas, { id: 'SpendItem' });

const spendList = z
  .array(spendItemSchema, { error: 'expected a list of spends' })
  .min(1, { error: 'expected at least one spend' });

export const spendBody = z
  .strictObject({
    tx: txHexSchema.optional(),
    spends: spendList.optional(),
    ignoreConflicting: bool.optional(),
    ignoreLocked: bool.optional(),
    blockHeight: uintSchema.optional(),
  })
  .superRefine((value, ctx) => {
    if (value.tx === undefined && value.spends === undefined) {
      ctx.addIssue({ code: 'custom', path: ['tx'], message: 'required: give the spending tx (EF hex) or spends' });
    } else if (value.tx !== undefined && value.spends !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['spends'], message: 'give either tx or spends, not both' });
    }
  })
  .register(apiSchemas, { id: 'SpendRequest' });

export const unspendBody = z
  .strictObject({ spends: spendList, blockHeight: uintSchema.optional(), flagAsLocked: bool.optional() })
  .register(apiSchemas, { id: 'UnspendRequest' });

export const minedBody = z
  .strictObject({
    txids: txidList,
    blockId: uintSchema,
    blockHeight: uintSchema,
    subtreeIdx: uintSchema,
    onLongestChain: bool.optional(),
    unsetMined: bool.optional(),
  })
  .register(apiSchemas, { id: 'SetMinedRequest' });

export const lockedBody = z
  .strictObject({ txids: txidList, locked: bool })
  .register(apiSchemas, { id: 'SetLockedRequest' });

export const conflictingBody = z
  .strictObject({ txids: txidList, conflicting: bool })
  .register(apiSchemas, { id: 'SetConflictingRequest' });

export const outpointSchema = z
  .strictObject({ txid: txidSchema, vout: uintSchema, utxoHash: hashSchema })
  .register(apiSchemas, { id: 'Outpoint' });

export const outpointsBody = z
  .strictObject({
    utxos: z.array(outpointSchema, { error: 'expected a list' }).min(1, { error: 'expected at least one utxo' }),
  })
  .register(apiSchemas, { id: 'UtxoListRequest' });

export const reassignBody = z
  .strictObject({
    txid: txidSchema,
    vout: uintSchema,
    utxoHash: hashSchema,
    newUtxoHash: hashSchema,
    blockHeight: uintSchema.optional(),
  })
  .register(apiSchemas, { id: 'ReassignRequest' });

export const preserveBody = z
  .strictObject({ txids: txidList, untilHeight: uintSchema })
  .register(apiSchemas, { id: 'PreserveRequest' });

export const longestChainBody = z
  .strictObject({ txids: txidList, onLongestChain: bool })
  .register(apiSchemas, { id: 'SetLongestChainRequest' });

export const processConflictingBody = z
  .strictObject({ txids: txidList })
  .register(apiSchemas, { id: 'ProcessConflictingRequest' });

export const verifySpendersBody = z
  .strictObject({ txids: txidList, repair: bool.optional() })
  .register(apiSchemas, { id: 'VerifySpendersRequest' });

export const chainTipBody = z.strictObject({ height: uintSchema }).register(apiSchemas, { id: 'ChainTip' });

export const cleanupBody = z
  .strictObject({
    maxSeconds: z
      .number({ error: 'expected a number of seconds' })
      .positive({ error: 'expected a positive number of seconds' })
      .max(900, { error: 'at most 900 seconds' })
      .optional(),
  })
  .register(apiSchemas, { id: 'CleanupRequest' });

/** Fields of GET /v1/txs/{txid}: any record bin, plus `tx` and `utxos`. */
export const GET_FIELDS: readonly string[] = [...RECORD_BINS, 'tx', 'utxos'];

export const getTxQuery = z.strictObject({
  fields: z
    .string()
    .meta({ description: `comma-separated list of: ${[...new Set(GET_FIELDS)].join(', ')}` })
    .transform((s, ctx) => {
      // an empty value (`?fields=`) or an empty item (`fee,,tx`) is an error, not a view with no fields
      const list = s.split(',').map((f) => f.trim());
      for (const f of list) {
        if (f === '') {
          ctx.addIssue({
            code: 'custom',
            message: 'expected a comma-separated list of field names; an empty one was given',
          });
          return z.NEVER;
        }
        if (!GET_FIELDS.includes(f)) {
          ctx.addIssue({ code: 'custom', message: `unknown field "${f}"` });
          return z.NEVER;
        }
      }
      return list;
    })
    .optional(),
});

export const txidPath = z.strictObject({ txid: txidSchema });

export const utxoPath = z.strictObject({ txid: txidSchema, vout: uintString() });

export const utxoQuery = z.strictObject({ utxoHash: hashSchema.optional() });

export const unminedQuery = z.strictObject({
  cutoff: uintString().meta({ description: 'txids with unminedSince <= cutoff' }),
  limit: uintString(10000, 1).optional(),
  cursor: z
    .string()
    .min(1)
    .max(1024)
    .meta({ description: 'cursor of the previous page (same cutoff; valid for an hour)' })
    .optional(),
});

export const unminedTxsQuery = z.strictObject({
  limit: uintString(10000, 1).optional(),
  cursor: z
    .string()
    .regex(/^[0-9a-f]{32}$/, { error: 'expected the cursor of the previous page' })
    .meta({ description: 'cursor of the previous page (valid for an hour)' })
    .optional(),
});

export const emptyObject = z.strictObject({});

// ---- responses ------------------------------------------------------------------------------------------------

export const errorEnvelope = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .register(apiSchemas, { id: 'Error' });

export const createResponse = z
  .object({
    txid: z.string(),
    fee: z.int(),
    sizeInBytes: z.int(),
    extendedSize: z.int(),
    external: z.boolean(),
    records: z.int(),
  })
  .register(apiSchemas, { id: 'CreateResponse' });

export const utxoViewSchema = z
  .object({
    utxoHash: z.string(),
    status: z.enum(['UNSPENT', 'SPENT', 'FROZEN']),
    spendingTxid: z.string().optional(),
    vin: z.int().optional(),
  })
  .register(apiSchemas, { id: 'UtxoView' });

export const txViewSchema = z
  .looseObject({
    txid: z.string(),
    tx: z.string().optional(),
    utxos: z.array(utxoViewSchema.nullable()).optional(),
  })
  .register(apiSchemas, { id: 'TxView', description: 'txid plus the requested fields (record bins, tx, utxos)' });

export const spendOutcomeSchema = z
  .object({
    txid: z.string(),
    vout: z.int(),
    status: z.enum(['OK', 'ERROR', 'ROLLED_BACK']),
    code: z.string().optional(),
    message: z.string().optional(),
    spendingTxid: z.string().optional(),
    vin: z.int().optional(),
  })
  .register(apiSchemas, { id: 'SpendOutcome' });

export const spendResponse = z
  .object({ spends: z.array(spendOutcomeSchema) })
  .register(apiSchemas, { id: 'SpendResponse' });

export const okResponse = z.object({ status: z.literal('OK') }).register(apiSchemas, { id: 'Ok' });

export const minedResponse = z
  .object({ blockIds: z.record(z.string(), z.array(z.int())) })
  .register(apiSchemas, { id: 'SetMinedResponse' });

export const spendStatusSchema = z
  .object({
    status: z.enum(['OK', 'SPENT', 'FROZEN', 'IMMATURE', 'CONFLICTING', 'LOCKED', 'CREATING', 'NOT_FOUND']),
    spendingTxid: z.string().optional(),
    vin: z.int().optional(),
    spendableAt: z.int().optional(),
  })
  .register(apiSchemas, { id: 'UtxoStatus' });

export const unminedResponse = z
  .object({ txids: z.array(z.string()), cursor: z.string().optional() })
  .register(apiSchemas, { id: 'UnminedPage' });

export const counterConflictingResponse = z
  .object({ txid: z.string(), counterConflicting: z.array(z.string()) })
  .register(apiSchemas, { id: 'CounterConflicting' });

export const conflictingChildrenResponse = z
  .object({ txid: z.string(), conflictingChildren: z.array(z.string()) })
  .register(apiSchemas, { id: 'ConflictingChildren' });

export const processConflictingResponse = z
  .object({ losingTxids: z.array(z.string()), markedConflicting: z.array(z.string()) })
  .register(apiSchemas, { id: 'ProcessConflictingResponse' });

export const verifySpendersResponse = z
  .object({
    checked: z.int(),
    lost: z.array(
      z.object({
        txid: z.string(),
        vout: z.int(),
        spendingTxid: z.string(),
        vin: z.int(),
        recorded: z.string().optional(),
        state: z.enum(['spent-by-other', 'unspent', 'missing', 'frozen']),
      }),
    ),
    markedConflicting: z.array(z.string()),
  })
  .register(apiSchemas, { id: 'VerifySpendersResponse' });

export const unminedTxSchema = z
  .object({
    txid: z.string(),
    fee: z.int(),
    sizeInBytes: z.int(),
    parentTxids: z.array(z.string()),
    createdAt: z.int(),
    locked: z.boolean(),
    conflicting: z.boolean(),
  })
  .register(apiSchemas, { id: 'UnminedTx' });

export const unminedTxsResponse = z
  .object({ txs: z.array(unminedTxSchema), cursor: z.string().optional() })
  .register(apiSchemas, { id: 'UnminedTxsPage' });

export const chainTipResponse = z.object({ height: z.int() }).register(apiSchemas, { id: 'ChainTipResponse' });

export const cleanupResponse = z
  .object({
    tip: z.int(),
    deleted: z.int(),
    kept: z.record(z.string(), z.int()),
    errors: z.int(),
    preserveExpired: z.int(),
    durationMs: z.int(),
    more: z.boolean(),
    busy: z
      .literal(true)
      .optional()
      .describe('present when another pass held some of the partition ranges: those were skipped, the others ran'),
    rangesBusy: z.int().optional().describe('present with busy: the number of partition ranges skipped'),
    rangesFailed: z
      .int()
      .optional()
      .describe(
        'present when the engine could not query some partition ranges (their index not ready, or a page failing ' +
          'after its retries): how many; each is counted in errors too, and the next pass runs them again',
      ),
    rangeError: z.string().optional().describe('present with rangesFailed: the first failure, as the engine said it'),
  })
  .register(apiSchemas, { id: 'CleanupReport' });

export const healthResponse = z
  .object({
    status: z.enum(['ok', 'degraded']),
    engine: z.string(),
    blobStore: z.string(),
    queue: z.string(),
  })
  .register(apiSchemas, { id: 'Health' });

// ---- batch requests and responses -----------------------------------------------------------------------------
// The envelope is checked here; each item is checked on its own by the route (a bad item fails only itself), with
// the schema of the single request (createBody, txHexSchema, txidSchema, ...).

const items = (what: string) =>
  z.array(z.unknown(), { error: `expected a list of ${what}` }).min(1, { error: `expected at least one of ${what}` });

/** A write batch's `brief`: each item that succeeded is answered by its status alone. */
const brief = bool.optional().meta({
  description:
    'true: an item that succeeded is answered {status} without its result (a block validator knows what it sent); ' +
    'a failed item is answered in full',
});

export const batchTxsBody = z
  .strictObject({ txs: items('{tx, blockHeight?, minedBlocks?, isCoinbase?, locked?, conflicting?}'), brief })
  .register(apiSchemas, { id: 'BatchCreateRequest' });

export const batchSpendsBody = z
  .strictObject({
    txs: items('EF transactions (hex)'),
    ignoreConflicting: bool.optional(),
    ignoreLocked: bool.optional(),
    blockHeight: uintSchema.optional(),
    brief,
  })
  .register(apiSchemas, { id: 'BatchSpendRequest' });

/** A tx of a binary batch body (lib/http/binary-batch.ts): its bytes, as txHexSchema makes of its hex. */
export const txBytesSchema = z
  .instanceof(Buffer, { error: 'expected the transaction bytes' })
  .refine((bytes) => bytes.length > 0, { error: 'expected the transaction bytes: its length is 0' });

/** An item of a binary POST /v1/batch/txs body: its options (createBody's fields but tx) and its tx's bytes. */
export const framedCreateItem = createBody.extend({ tx: txBytesSchema });

export const getFieldsSchema = z
  .array(
    z.string().refine((f) => GET_FIELDS.includes(f), { error: 'unknown field' }),
    { error: 'expected a list of field names' },
  )
  .meta({ description: `any of: ${[...new Set(GET_FIELDS)].join(', ')}` });

export const batchGetBody = z
  .strictObject({ txids: items('txids'), fields: getFieldsSchema.optional() })
  .register(apiSchemas, { id: 'BatchGetRequest' });

export const outpointRefSchema = z.strictObject({ txid: txidSchema, vout: uintSchema });

export const batchOutputsBody = z
  .strictObject({ outpoints: items('{txid, vout}') })
  .register(apiSchemas, { id: 'BatchOutputsRequest' });

export const utxoRefSchema = z.strictObject({ txid: txidSchema, vout: uintSchema, utxoHash: hashSchema.optional() });

export const batchUtxosBody = z
  .strictObject({ utxos: items('{txid, vout, utxoHash?}') })
  .register(apiSchemas, { id: 'BatchUtxosRequest' });

export const previousOutputSchema = z
  .object({ txid: z.string(), vout: z.int(), satoshis: z.int(), lockingScript: z.string() })
  .register(apiSchemas, { id: 'PreviousOutput' });

/** One item's outcome: the status the single request would have answered, and its body or its error. */
export function batchResponse<T extends z.ZodType>(id: string, result: T) {
  return z
    .object({
      results: z.array(
        z.object({
          status: z.int().meta({ description: 'the status code the single request would have answered' }),
          result: result.optional(),
          error: errorEnvelope.shape.error.optional(),
        }),
      ),
    })
    .register(apiSchemas, { id });
}
