/**
 * Body fields a route accepts only from a higher role than its own (the route table's `restrictedFields`;
 * docs/api.md, "Roles"; docs/security.md, "What a validator is trusted with"). Creating a tx may carry state that a
 * later route sets on an existing tx: the blocks it is mined in (POST /v1/mined), locked (POST /v1/locked) and
 * conflicting (POST /v1/conflicting). Each is accepted on create only from a role that may call that route, so a
 * validator cannot create a tx already mined (a coinbase's maturity counted from a block it names), locked or
 * conflicting.
 */
import { HttpError } from './errors';
import { roleAllows, type ApiRole } from './roles';

interface RouteLike {
  method: string;
  path: string;
  fn: string;
  role: ApiRole;
  batch?: { items: string };
  restrictedFields?: Record<string, string>;
}

const keyOf = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

/** The restricted fields of a route, each with the least role that may send it (that of the route setting it). */
export function fieldRoles(routes: readonly RouteLike[], route: RouteLike): Record<string, ApiRole> {
  const out: Record<string, ApiRole> = {};
  for (const [field, setter] of Object.entries(route.restrictedFields ?? {})) {
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

/** 403 FIELD_NOT_ALLOWED when the body (or a batch item) sends a field the caller's role may not. */
export function checkFieldRoles(routes: readonly RouteLike[], route: RouteLike, body: unknown, role: ApiRole): void {
  if (!route.restrictedFields || body === null || typeof body !== 'object') return;
  const roles = fieldRoles(routes, route);
  const key = route.batch?.items;
  const list = key ? (body as Record<string, unknown>)[key] : undefined;
  const objects: [string, unknown][] = key
    ? (Array.isArray(list) ? list : []).map((item, i): [string, unknown] => [`${key}[${i}].`, item])
    : [['', body]];
  for (const [prefix, obj] of objects) {
    if (obj === null || typeof obj !== 'object') continue;
    for (const [field, required] of Object.entries(roles)) {
      if ((obj as Record<string, unknown>)[field] === undefined || roleAllows(role, required)) continue;
      throw new HttpError(
        403,
        'FIELD_NOT_ALLOWED',
        `${prefix}${field}: only the ${required} role and above may set it (${route.restrictedFields[field]} on an ` +
          `existing tx); this request holds the ${role} role`,
        { field: `${prefix}${field}`, required, role },
      );
    }
  }
}
