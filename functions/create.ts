/** POST /v1/txs: create a transaction (DESIGN section 10). A thin middy pipeline over the route table: see lib/http/middleware.ts. */
import { httpHandler } from '../lib/http/middleware';

export const handler = httpHandler('create');
