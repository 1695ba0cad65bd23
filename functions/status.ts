/**
 * The validators' cheap reads (docs/api.md): GET /v1/health and GET /v1/chain/tip, in a function of their own with
 * its own reserved concurrency and API Gateway method throttles, so that a noisy validator fleet cannot starve block
 * validation's writes on the admin function (docs/security.md, "The function split"). See lib/http/route-table.ts.
 */
import { httpHandler } from '../lib/http/middleware';

export const handler = httpHandler('status');
