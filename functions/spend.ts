/** POST /v1/spends: spend outputs (all or nothing) (docs/api.md). A thin middy pipeline over the route table: see lib/http/middleware.ts. */
import { httpHandler } from '../lib/http/middleware';

export const handler = httpHandler('spend');
