/**
 * `@bsv-utxo-store/client`: a typed client of the UTXO store's API for node services (validators, block assembly,
 * block validation).
 *
 *   const local = localClient('http://127.0.0.1:8080');
 *   const aws = awsClient({ apiUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod', region: 'eu-west-1' });
 *   const direct = lambdaClient({ region: 'eu-west-1', functionNames: { spend: 'utxo-store-spend', ... } });
 *   await aws.spend(efHex);   // typed result, or a typed ApiError (ConflictError with details.spends, ...)
 */
import { UtxoStoreClient, type ClientOptions } from './client.js';
import { LambdaTransport, type LambdaTransportOptions } from './lambda-transport.js';
import { SigV4HttpTransport, type SigV4Options } from './sigv4-transport.js';
import { HttpTransport } from './transport.js';

export { UtxoStoreClient } from './client.js';
export type { BatchingOptions, BriefOption, ClientOptions, CreateOptions, MinedBlock, SpendOptions } from './client.js';
export { Batcher } from './batcher.js';
export type { BatcherOptions, BatcherStats, ItemResult, SendBatch } from './batcher.js';
export { BATCH_OPERATIONS, decodeBatchItem, decodeBatchResponse } from './batch-routes.js';
export type {
  BatchCreateRequest,
  BatchGetRequest,
  BatchOperationId,
  BatchOutputsRequest,
  BatchSpendRequest,
  BatchTypes,
  BatchUtxosRequest,
  PreviousOutput,
} from './batch-routes.js';
export * from './errors.js';
export { BINARY_MEDIA_TYPE, encodeBatchFrame } from './binary-batch.js';
export type { BinaryBatchOperation } from './binary-batch.js';
export { chunkItems, JobError, runChunks } from './jobs.js';
export type { JobOptions, JobProgress } from './jobs.js';
export { OPERATIONS } from './operations.js';
export type * from './operations.js';
export { backoffMs, isRetryable, withRetries } from './retry.js';
export type { RetryOptions } from './retry.js';
export { HttpTransport, concretePath, queryString } from './transport.js';
export type { HttpTransportOptions, Transport, TransportRequest, TransportResponse } from './transport.js';
export { RequestSigner, SigV4HttpTransport } from './sigv4-transport.js';
export type { SigV4Options, SigV4TransportOptions } from './sigv4-transport.js';
export { LambdaTransport, directEvent } from './lambda-transport.js';
export type {
  DirectInvocationEvent,
  InvokeInput,
  InvokeOutput,
  LambdaInvoker,
  LambdaTransportOptions,
} from './lambda-transport.js';
/** The API's request and answer types by their OpenAPI names, e.g. `api.SpendResponse`, and `api.Operations`. */
export type * as api from './generated/api-types.js';
export { BATCH_FRAME, MAX_BINARY_BODY_BYTES, MAX_BODY_BYTES, ROUTES } from './generated/api-types.js';
export type { FunctionName, HttpMethod, HttpErrorCode, StoreErrorCode } from './generated/api-types.js';

type Extra = Omit<ClientOptions, 'transport'>;

/** A client of the local server (`npm start`), plain HTTP. */
export function localClient(baseUrl = 'http://127.0.0.1:8080', options: Extra = {}): UtxoStoreClient {
  return new UtxoStoreClient({ ...options, transport: new HttpTransport({ baseUrl }) });
}

/** A client of the deployed API through API Gateway, SigV4-signed with the default credential chain. */
export function awsClient(options: Extra & SigV4Options & { apiUrl: string }): UtxoStoreClient {
  const { apiUrl, region, service, credentials, signBodyHash, now, ...rest } = options;
  return new UtxoStoreClient({
    ...rest,
    transport: new SigV4HttpTransport({ baseUrl: apiUrl, region, service, credentials, signBodyHash, now }),
  });
}

/** A client invoking the functions directly (Lambda Invoke API); function names from the stack outputs. */
export function lambdaClient(options: Extra & LambdaTransportOptions): UtxoStoreClient {
  const { functionNames, client, region, ...rest } = options;
  return new UtxoStoreClient({ ...rest, transport: new LambdaTransport({ functionNames, client, region }) });
}
