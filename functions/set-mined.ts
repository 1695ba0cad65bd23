/** POST /v1/mined: add or remove a block (docs/api.md). A thin middy pipeline over the route table: see lib/http/middleware.ts. */
import { httpHandler } from '../lib/http/middleware';

export const handler = httpHandler('set-mined');
