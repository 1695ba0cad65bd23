/** GET /v1/utxos/{txid}/{vout}: spendability of one output (docs/api.md). A thin middy pipeline over the route table: see lib/http/middleware.ts. */
import { httpHandler } from '../lib/http/middleware';

export const handler = httpHandler('get-utxo');
