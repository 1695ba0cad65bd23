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
  // only the fields this role may not set are looked for; a batch's items are walked in place (a create batch
  // holds up to MAX_BATCH_ITEMS of them: nothing is allocated per item)
  const denied = Object.entries(fieldRoles(routes, route)).filter(([, required]) => !roleAllows(role, required));
  if (denied.length === 0) return;
  const key = route.batch?.items;
  // index: the batch item's, or -1 for the body itself
  const check = (obj: unknown, index: number): void => {
    if (obj === null || typeof obj !== 'object') return;
    for (const [field, required] of denied) {
      if ((obj as Record<string, unknown>)[field] === undefined) continue;
      const prefix = index < 0 ? '' : `${key}[${index}].`;
      throw new HttpError(
        403,
        'FIELD_NOT_ALLOWED',
        `${prefix}${field}: only the ${required} role and above may set it (${route.restrictedFields![field]} on an ` +
          `existing tx); this request holds the ${role} role`,
        { field: `${prefix}${field}`, required, role },
      );
    }
  };
  if (!key) return check(body, -1);
  const list = (body as Record<string, unknown>)[key];
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) check(list[i], i);
}
