/**
 * A failed zod check as the API's 400 INVALID_ARGUMENT: the request validation (middleware.ts) and each item of a
 * batch (batch-items.ts) answer it the same way.
 */
import type { z } from 'zod';
import { invalidArgument, type HttpError } from './errors';

/** "a.b[0].c" from a zod issue path. */
function fieldName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/** The first zod issue as a 400 naming the field; every issue in details.issues (also for one item of a batch). */
export function zodError(where: 'body' | 'query' | 'path', input: unknown, error: z.ZodError): HttpError {
  const issues = error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys[0];
      return { field: fieldName([...issue.path, key]), message: 'unknown field' };
    }
    if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined && issue.path.length > 0) {
      return { field: fieldName(issue.path), message: 'required' };
    }
    return { field: fieldName(issue.path), message: issue.message };
  });
  const first = issues[0];
  const field = first.field === '' ? (where === 'path' ? 'path' : where) : first.field;
  return invalidArgument(field, first.message, { in: where, issues });
}
