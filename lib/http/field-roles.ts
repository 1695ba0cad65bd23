/**
 * Body fields a route accepts only from a higher role than its own (docs/api.md, "Roles"; docs/security.md, "What a
 * validator is trusted with"). Two kinds (lib/http/route-spec.ts):
 * - `restrictedFields`: creating a tx may carry what a later route sets on an existing tx: the blocks it is mined in
 *   and the height it counts from (POST /v1/mined), locked (POST /v1/locked) and conflicting (POST /v1/conflicting).
 *   Each is accepted on create only from a role that may call that route, so a validator cannot create a tx already
 *   mined, locked or conflicting, nor a coinbase that counts its maturity from a height of its choosing. On a batch
 *   route they are looked for in each item. They raise who may invoke the function directly.
 * - `roleFlags`: top-level flags that use another route's power (ignoreLocked, ignoreConflicting, flagAsLocked), on
 *   the single and the batch body. They do not raise who may invoke the function directly (validators keep direct
 *   spend and unspend), so a direct invoker, which holds the function's least invoker role, is refused them. A flag
 *   sent false asks for nothing and is accepted.
 */
import { HttpError } from './errors';
import { fieldRoles, roleAllows, type ApiRole, type RouteLike } from './roles';

function refuse(route: RouteLike, setter: string, field: string, required: ApiRole, role: ApiRole): never {
  throw new HttpError(
    403,
    'FIELD_NOT_ALLOWED',
    `${field}: only the ${required} role and above may send it (the role of ${setter}); this request holds the ` +
      `${role} role`,
    { field, required, role },
  );
}

/** 403 FIELD_NOT_ALLOWED when the body (or a batch item) sends a field the caller's role may not. */
export function checkFieldRoles(routes: readonly RouteLike[], route: RouteLike, body: unknown, role: ApiRole): void {
  if (body === null || typeof body !== 'object') return;
  const flags = Object.entries(fieldRoles(routes, route, 'roleFlags'));
  for (const [flag, required] of flags) {
    // false asks for nothing (a client may send every flag with its default)
    const value = (body as Record<string, unknown>)[flag];
    if (value === undefined || value === false || roleAllows(role, required)) continue;
    refuse(route, route.roleFlags![flag], flag, required, role);
  }
  if (!route.restrictedFields) return;
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
      refuse(route, route.restrictedFields![field], `${prefix}${field}`, required, role);
    }
  };
  if (!key) return check(body, -1);
  const list = (body as Record<string, unknown>)[key];
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) check(list[i], i);
}
