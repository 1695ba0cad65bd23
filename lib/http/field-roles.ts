/**
 * Body fields a route accepts only from a higher role than its own (the route table's `restrictedFields`;
 * docs/api.md, "Roles"; docs/security.md, "What a validator is trusted with"). Creating a tx may carry state that a
 * later route sets on an existing tx: the blocks it is mined in (POST /v1/mined), locked (POST /v1/locked) and
 * conflicting (POST /v1/conflicting). Each is accepted on create only from a role that may call that route, so a
 * validator cannot create a tx already mined (a coinbase's maturity counted from a block it names), locked or
 * conflicting.
 */
import { HttpError } from './errors';
import { fieldRoles, roleAllows, type ApiRole, type RouteLike } from './roles';

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
