/**
 * Body fields a route accepts only from a higher role than its own (docs/api.md, "Roles"; docs/security.md, "What a
 * validator is trusted with"). Creating a tx may carry state that a later route sets on an existing tx: the blocks it
 * is mined in (POST /v1/mined), locked (POST /v1/locked) and conflicting (POST /v1/conflicting). Each is accepted on
 * create only from a role that may call that route, so a validator cannot create a tx already mined (its coinbase
 * maturity counted from a block it names), locked or conflicting.
 */
import { HttpError } from './errors';
import { roleAllows, type ApiRole } from './roles';

interface RouteLike {
  method: string;
  path: string;
  fn: string;
  role: ApiRole;
}

/** create field -> the route that sets it on an existing tx */
export const CREATE_FIELD_ROUTES = {
  minedBlocks: 'POST /v1/mined',
  locked: 'POST /v1/locked',
  conflicting: 'POST /v1/conflicting',
} as const;

/** route -> where its restricted fields are (the body, or each item of a list) and which they are */
const RESTRICTED: Record<string, { items?: string; fields: Record<string, string> }> = {
  'POST /v1/txs': { fields: CREATE_FIELD_ROUTES },
  'POST /v1/batch/txs': { items: 'txs', fields: CREATE_FIELD_ROUTES },
};

const keyOf = (r: RouteLike) => `${r.method} ${r.path}`;

/** The restricted fields of a route, each with the least role that may send it. */
export function fieldRoles(routes: readonly RouteLike[], route: RouteLike): Record<string, ApiRole> {
  const spec = RESTRICTED[keyOf(route)];
  if (!spec) return {};
  const out: Record<string, ApiRole> = {};
  for (const [field, setter] of Object.entries(spec.fields)) {
    const target = routes.find((r) => keyOf(r) === setter);
    if (!target) throw new Error(`field role of ${field}: no route ${setter}`);
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

/** 403 FIELD_NOT_ALLOWED when the body sends a field the caller's role may not. */
export function checkFieldRoles(routes: readonly RouteLike[], route: RouteLike, body: unknown, role: ApiRole): void {
  const spec = RESTRICTED[keyOf(route)];
  if (!spec || body === null || typeof body !== 'object') return;
  const roles = fieldRoles(routes, route);
  const list = spec.items ? (body as Record<string, unknown>)[spec.items] : undefined;
  const objects: [string, unknown][] = spec.items
    ? (Array.isArray(list) ? list : []).map((item, i): [string, unknown] => [`${spec.items}[${i}].`, item])
    : [['', body]];
  for (const [prefix, obj] of objects) {
    if (obj === null || typeof obj !== 'object') continue;
    for (const [field, required] of Object.entries(roles)) {
      if ((obj as Record<string, unknown>)[field] === undefined || roleAllows(role, required)) continue;
      throw new HttpError(
        403,
        'FIELD_NOT_ALLOWED',
        `${prefix}${field}: only the ${required} role and above may set it (${spec.fields[field]} on an existing tx); ` +
          `this request holds the ${role} role`,
        { field: `${prefix}${field}`, required, role },
      );
    }
  }
}
