/** POST /v1/unspends: undo spends (docs/api.md). A thin middy pipeline over the route table: see lib/http/middleware.ts. */
import { httpHandler } from '../lib/http/middleware';

export const handler = httpHandler('unspend');
