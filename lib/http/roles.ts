/**
 * The callers' roles of the HTTP API. Every route names the least role that may call it (lib/http/route-table.ts); the
 * CDK app derives one IAM role per entry here, each allowed exactly the routes of its rank and below (cdk/api.ts),
 * and the OpenAPI document states each operation's role (lib/http/openapi.ts). No dependencies: cdk/ imports it.
 *
 * - validator: creates and reads txs, spends and unspends (a failed validation undoes its own spends), reads UTXOs,
 *   the chain tip and health. It may not create a tx mined, locked or conflicting or state a create's height (a
 *   route's restrictedFields), nor spend locked or conflicting outputs or lock with an unspend (its roleFlags).
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

/** What the role rules read of a route (the route table's entries, cdk's routes). */
export interface RouteLike {
  method: string;
  path: string;
  fn: string;
  role: ApiRole;
  batch?: { items: string };
  restrictedFields?: Record<string, string>;
  /** flags refused below a route's role, which do not raise the function's invoker role (route-spec.ts) */
  roleFlags?: Record<string, string>;
}

const keyOf = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

/**
 * The restricted fields of a route (or, with `flags`, its role flags), each with the least role that may send it
 * (that of the route named for it).
 */
export function fieldRoles(
  routes: readonly RouteLike[],
  route: RouteLike,
  which: 'restrictedFields' | 'roleFlags' = 'restrictedFields',
): Record<string, ApiRole> {
  const out: Record<string, ApiRole> = {};
  for (const [field, setter] of Object.entries(route[which] ?? {})) {
    const target = routes.find((r) => keyOf(r) === setter);
    if (!target) throw new Error(`${keyOf(route)}: the restricted field ${field} names no route ${setter}`);
    out[field] = target.role;
  }
  return out;
}

/** The least role that may call every route of a function with every field: whom its resource policy may admit. */
export function leastInvokerRole(fn: string, routes: readonly RouteLike[]): ApiRole | undefined {
  let least: ApiRole | undefined;
  for (const r of routes) {
    if (r.fn !== fn) continue;
    for (const role of [r.role, ...Object.values(fieldRoles(routes, r))])
      if (least === undefined || roleAllows(role, least)) least = role;
  }
  return least;
}
