/**
 * The callers' roles of the HTTP API. Every route names the least role that may call it (lib/http/route-table.ts); the
 * CDK app derives one IAM role per entry here, each allowed exactly the routes of its rank and below (cdk/api.ts),
 * and the OpenAPI document states each operation's role (lib/http/openapi.ts). No dependencies: cdk/ imports it.
 *
 * - validator: creates and reads txs, spends and unspends (a failed validation undoes its own spends), reads UTXOs,
 *   the chain tip and health.
 * - blockValidation: everything a validator may, plus what follows a block: setMined, locked, conflicting, preserve,
 *   the unmined query, and moving the chain tip forward by at most MAX_TIP_ADVANCE blocks per call.
 * - admin: everything, plus deleting txs, freeze/unfreeze/reassign (alert system), an on-demand cleanup pass and
 *   forcing the chain tip to any height.
 */
export const API_ROLES = ['validator', 'blockValidation', 'admin'] as const;
export type ApiRole = (typeof API_ROLES)[number];

/** Whether `caller` may call a route that requires `required` (roles are ordered: admin > blockValidation > validator). */
export function roleAllows(caller: ApiRole, required: ApiRole): boolean {
  return API_ROLES.indexOf(caller) >= API_ROLES.indexOf(required);
}
