/**
 * The admin routes (docs/api.md), one function: DELETE /v1/txs/{txid}, POST /v1/locked, /v1/conflicting,
 * /v1/freeze, /v1/unfreeze, /v1/reassign, /v1/preserve, GET /v1/unmined, PUT /v1/chain/tip (and /force),
 * POST /v1/cleanup (GET /v1/health and GET /v1/chain/tip: functions/status.ts). The route is chosen by the event's resource (or path); see lib/http/route-table.ts.
 */
import { httpHandler } from '../lib/http/middleware';

export const handler = httpHandler('admin');
