/** GET /v1/txs/{txid}: read a transaction (docs/api.md). A thin middy pipeline over the route table: see lib/http/middleware.ts. */
import { httpHandler } from '../lib/http/middleware';

export const handler = httpHandler('get');
