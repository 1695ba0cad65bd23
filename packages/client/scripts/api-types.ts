/**
 * Renders src/generated/api-types.ts: the API as the client sees it, as plain TypeScript, from the server's route
 * table (lib/http/route-table.ts), zod schemas (lib/http/schemas.ts), error codes and payload limit. The published client
 * imports only this file, never the server's code or zod; test/client/generated-api-types.test.ts fails when the
 * committed file differs from what this renders (an API change not carried into the client), and
 * test/client/api-types-equal.ts checks at compile time that the types equal the ones zod infers.
 *
 * Request parts (path parameters, query, body) are the schemas' input types; responses their output types. A schema
 * registered in the server's apiSchemas registry becomes a named type (its OpenAPI component name). Only the zod
 * kinds the API uses are rendered; any other is an error naming the kind, not a silently loose type.
 */
import * as prettier from 'prettier';
import type { z } from 'zod';
import { STORE_ERROR_CODES } from '../../../lib/domain/errors';
import { HTTP_ERROR_CODES } from '../../../lib/http/errors';
import { FRAME_KIND, FRAME_MAGIC, FRAME_VERSION } from '../../../lib/http/binary-batch';
import { MAX_BINARY_BODY_BYTES, MAX_BODY_BYTES } from '../../../lib/http/payload-limits';
import type { RouteSpec } from '../../../lib/http/route-spec';
import { ROUTE_TABLE } from '../../../lib/http/route-table';
import { apiSchemas } from '../../../lib/http/schemas';

type Io = 'input' | 'output';

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
  options?: z.ZodType[];
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  values?: unknown[];
  entries?: Record<string, string | number>;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;
const optionality = (schema: z.ZodType, io: Io): string | undefined =>
  (schema as unknown as { _zod: { optin?: string; optout?: string } })._zod[io === 'input' ? 'optin' : 'optout'];

/** The TypeScript of zod schemas, collecting the named (registered) types it refers to. */
class TypeRenderer {
  /** name -> declaration, in the order first rendered (a type's parts before it) */
  readonly declarations = new Map<string, string>();
  private readonly names = new Map<z.ZodType, Partial<Record<Io, string>>>();

  typeOf(schema: z.ZodType, io: Io, where: string): string {
    const meta = apiSchemas.get(schema);
    if (meta) return this.named(schema, io, meta.id, meta.description, where);
    return this.structure(schema, io, where);
  }

  private named(schema: z.ZodType, io: Io, id: string, description: string | undefined, where: string): string {
    const known = this.names.get(schema)?.[io];
    if (known) return known;
    const text = this.structure(schema, io, `${where} (${id})`);
    const decl = (name: string) => `${description ? `/** ${description} */\n` : ''}export type ${name} = ${text};`;
    // the same component read the other way round (input vs output) with another shape gets a suffix
    let name = id;
    const existing = this.declarations.get(id);
    if (existing !== undefined && existing !== decl(id)) name = `${id}${io === 'input' ? 'Input' : 'Output'}`;
    this.declarations.set(name, decl(name));
    this.names.set(schema, { ...this.names.get(schema), [io]: name });
    return name;
  }

  private structure(schema: z.ZodType, io: Io, where: string): string {
    const def = defOf(schema);
    switch (def.type) {
      case 'string':
      case 'number':
      case 'boolean':
      case 'unknown':
      case 'null':
      case 'undefined':
      case 'never':
        return def.type;
      case 'literal':
        return (def.values ?? []).map((v) => JSON.stringify(v)).join(' | ');
      case 'enum':
        return Object.values(def.entries ?? {})
          .map((v) => JSON.stringify(v))
          .join(' | ');
      case 'array': {
        const element = this.typeOf(def.element as z.ZodType, io, `${where}[]`);
        return /^[\w.]+$/.test(element) ? `${element}[]` : `(${element})[]`;
      }
      case 'optional':
        return `${this.typeOf(def.innerType as z.ZodType, io, where)} | undefined`;
      case 'nullable':
        return `${this.typeOf(def.innerType as z.ZodType, io, where)} | null`;
      case 'union':
        return (def.options ?? []).map((o) => this.typeOf(o, io, where)).join(' | ');
      case 'record': {
        if (defOf(def.keyType as z.ZodType).type !== 'string')
          throw new Error(`${where}: a record keyed by non-strings`);
        return `{ [key: string]: ${this.typeOf(def.valueType as z.ZodType, io, `${where}[key]`)} }`;
      }
      case 'object':
        return this.object(def, io, where);
      case 'pipe':
        // the input of a pipe is its first stage's, the output its last stage's
        return io === 'input'
          ? this.typeOf(def.in as z.ZodType, io, where)
          : this.typeOf(def.out as z.ZodType, io, where);
      case 'transform':
        if (io === 'input') return 'unknown';
        throw new Error(`${where}: the output type of a transform cannot be rendered (its type lives in a function)`);
      default:
        throw new Error(`${where}: zod type "${def.type}" is not rendered by the client's type generator`);
    }
  }

  private object(def: Def, io: Io, where: string): string {
    const lines: string[] = [];
    for (const [key, prop] of Object.entries(def.shape ?? {})) {
      const optional = optionality(prop, io) === 'optional';
      let value = prop;
      while (defOf(value).type === 'optional') value = defOf(value).innerType as z.ZodType;
      const description = prop.description ?? value.description;
      const doc = description ? `/** ${description} */\n` : '';
      const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
      lines.push(`${doc}${name}${optional ? '?' : ''}: ${this.typeOf(value, io, `${where}.${key}`)};`);
    }
    const catchall = def.catchall ? defOf(def.catchall).type : 'never';
    if (catchall === 'unknown') lines.push('[key: string]: unknown;');
    else if (catchall !== 'never') throw new Error(`${where}: an object with a catchall of ${catchall}`);
    return lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n}`;
  }

  /** True when every field of an object schema may be left out (an empty part of a request can be omitted). */
  static allOptional(schema: z.ZodType): boolean {
    const def = defOf(schema);
    if (def.type !== 'object') return false;
    return Object.values(def.shape ?? {}).every((p) => optionality(p, 'input') === 'optional');
  }
}

const SUCCESS = [200, 201, 204] as const;
const union = (values: readonly string[]) => [...new Set(values)].map((v) => JSON.stringify(v)).join(' | ');

/** The generated module's text (formatted with the repository's prettier settings). */
export async function renderApiTypes(): Promise<string> {
  const types = new TypeRenderer();
  const routes: readonly RouteSpec[] = ROUTE_TABLE;
  const operations: string[] = [];
  const endpoints: string[] = [];
  for (const route of routes) {
    const id = route.operationId;
    const parts: string[] = [];
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = route[part];
      if (!schema) {
        // a part the route does not take is a type error when given
        parts.push(`${part}?: never;`);
        continue;
      }
      const optional = TypeRenderer.allOptional(schema);
      parts.push(`${part}${optional ? '?' : ''}: ${types.typeOf(schema, 'input', `${id}.${part}`)};`);
    }
    const responses: string[] = [];
    for (const status of SUCCESS) {
      const doc = route.responses[status];
      if (!doc) continue;
      responses.push(status === 204 || !doc.schema ? 'void' : types.typeOf(doc.schema, 'output', `${id}.${status}`));
    }
    if (responses.length === 0) throw new Error(`${id}: no success response (200, 201 or 204) documented`);
    const request = `{\n${parts.join('\n')}\n}`;
    operations.push(`/** ${route.method} ${route.path}: ${route.summary} */\n${id}: {
      request: ${request};
      response: ${[...new Set(responses)].join(' | ')};
    };`);
    endpoints.push(`${id}: { method: '${route.method}', path: '${route.path}', fn: '${route.fn}' },`);
  }

  const text = `/**
 * GENERATED by packages/client/scripts/generate-api-types.ts from the server's route table
 * (lib/http/route-table.ts), zod schemas (lib/http/schemas.ts), error codes (lib/domain/errors.ts,
 * lib/http/errors.ts), payload limits (lib/http/payload-limits.ts) and batch frame (lib/http/binary-batch.ts). Do
 * not edit: run \`npm run generate -w @bsv-utxo-store/client\`. \`npm test\` fails when this file is out of date.
 */

/** The Lambda function serving a route (functions/<name>.ts; direct invocation targets it). */
export type FunctionName = ${union(routes.map((r) => r.fn).sort())};

export type HttpMethod = ${union(routes.map((r) => r.method).sort())};

/** The store's error codes (lib/domain/errors.ts). */
export type StoreErrorCode = ${union(STORE_ERROR_CODES)};

/** The HTTP layer's own error codes (lib/http/errors.ts). */
export type HttpErrorCode = ${union(HTTP_ERROR_CODES)};

/** Bodies over this many bytes are answered 413 PAYLOAD_TOO_LARGE (Lambda's 6 MB less a reserve for the event). */
export const MAX_BODY_BYTES = ${MAX_BODY_BYTES};

/** Binary batch bodies over this many bytes are answered 413 PAYLOAD_TOO_LARGE (their base64 fills MAX_BODY_BYTES). */
export const MAX_BINARY_BODY_BYTES = ${MAX_BINARY_BODY_BYTES};

/** The binary batch frame's magic, version and route kinds (lib/http/binary-batch.ts; docs/api.md). */
export const BATCH_FRAME = {
  magic: ${JSON.stringify(FRAME_MAGIC.toString('latin1'))},
  version: ${FRAME_VERSION},
  kinds: { createTxs: ${FRAME_KIND.txs}, spendTxs: ${FRAME_KIND.spends} },
} as const;

${[...types.declarations.values()].join('\n\n')}

/** Method, resource path and function of each operation of the route table, in its order. */
export const ROUTES = {
${endpoints.join('\n')}
} as const;

/** Request (path parameters, query, JSON body) and success answer of each operation. */
export type Operations = {
${operations.join('\n')}
};
`;
  const options = (await prettier.resolveConfig(__filename)) ?? {};
  return prettier.format(text, { ...options, parser: 'typescript' });
}
