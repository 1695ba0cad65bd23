/**
 * The OpenAPI 3.1 document of the API, generated from the route table and its zod schemas (z.toJSONSchema; JSON
 * Schema 2020-12 is OpenAPI 3.1's schema dialect). Named schemas become components.
 *
 * Security: API Gateway authorizes every method with IAM (SigV4-signed requests); the document declares that scheme
 * the way API Gateway's own OpenAPI extensions do (an apiKey in the Authorization header with
 * x-amazon-apigateway-authtype awsSigv4) and names, per operation, the least caller role allowed
 * (x-required-role, lib/http/roles.ts). test/http/openapi-lint.test.ts lints the document with Redocly (0 errors).
 */
import * as z from 'zod';
import { API_ROLES } from './roles';
import { MAX_BINARY_BODY_BYTES } from './payload-limits';
import { BINARY_MEDIA_TYPE, paramNames, type RouteSpec } from './route-spec';
import { ROUTE_TABLE } from './route-table';
import { apiSchemas } from './schemas';

type JsonSchema = Record<string, unknown>;

const REF = (id: string) => `#/components/schemas/${id}`;

/** The name of the security scheme every operation requires. */
export const SIGV4_SCHEME = 'sigv4';

const SECURITY_SCHEMES = {
  [SIGV4_SCHEME]: {
    type: 'apiKey',
    name: 'Authorization',
    in: 'header',
    description:
      'AWS Signature Version 4 (IAM authorization on every method). Sign with credentials of one of the roles the ' +
      `deployment creates (${API_ROLES.join(', ')}); x-required-role on each operation names the least role allowed.`,
    'x-amazon-apigateway-authtype': 'awsSigv4',
  },
};

/** API Gateway's own answer to an unsigned request or a role without the route (before any function runs). */
const E403 = {
  description: 'unsigned request, or the caller is not allowed this route (its role is below x-required-role)',
};

/** The binary body of the write batches: a frame whose layout docs/api.md gives (lib/http/binary-batch.ts). */
const BINARY_BODY = {
  type: 'string',
  format: 'binary',
  contentMediaType: BINARY_MEDIA_TYPE,
  description:
    'A binary batch frame (docs/api.md, "Binary batch bodies"): magic "UTXB", version 1, the route kind (1 txs, ' +
    '2 spends), the request options as length-prefixed JSON, the item count, then per item its options JSON and its ' +
    "tx's raw bytes (extended format when it has inputs), each length-prefixed (u32 little-endian). Answered as the " +
    `JSON body; a malformed frame is 400 BAD_FRAME naming the byte offset and the item; at most ${MAX_BINARY_BODY_BYTES} bytes.`,
};

function clean(schema: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const id = apiSchemas.get(schema)?.id;
  if (id) return { $ref: REF(id) };
  return clean(z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema);
}

/** Properties of an object schema as OpenAPI parameters. */
function parameters(route: RouteSpec): JsonSchema[] {
  const out: JsonSchema[] = [];
  const add = (where: 'path' | 'query', schema: z.ZodType | undefined) => {
    if (!schema) return;
    const json = toSchema(schema, 'input');
    const props = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(props)) {
      const { description, ...rest } = prop;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  };
  add('path', route.params);
  add('query', route.query);
  // a path parameter without a schema (none today) is still declared
  for (const name of paramNames(route.path)) {
    if (!out.some((p) => p.in === 'path' && p.name === name))
      out.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  return out;
}

export function buildOpenApi(options: { serverUrl?: string } = {}): JsonSchema {
  const components = z.toJSONSchema(apiSchemas, { io: 'input', unrepresentable: 'any', uri: REF }) as {
    schemas: Record<string, JsonSchema>;
  };
  const schemas: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(components.schemas)) schemas[id] = clean(schema);

  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of ROUTE_TABLE as readonly RouteSpec[]) {
    const responses: Record<string, JsonSchema> = {};
    for (const [status, doc] of Object.entries(route.responses)) {
      responses[status] = doc.schema
        ? { description: doc.description, content: { 'application/json': { schema: toSchema(doc.schema, 'output') } } }
        : { description: doc.description };
    }
    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.fn],
      'x-lambda-function': route.fn,
      'x-required-role': route.role,
      security: [{ [SIGV4_SCHEME]: [] }],
      parameters: parameters(route),
      responses: { ...responses, 403: E403 },
    };
    if (route.body) {
      const content: JsonSchema = { 'application/json': { schema: toSchema(route.body, 'input') } };
      if (route.batch?.binary) content[BINARY_MEDIA_TYPE] = { schema: BINARY_BODY };
      operation.requestBody = { required: !route.bodyOptional, content };
    }
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'bsv-utxo-store',
      version: 'v1',
      description:
        'UTXO store for Bitcoin SV (docs/api.md). Txids and hashes in display hex; errors as {"error": {"code", "message", "details"?}}.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: options.serverUrl
      ? [{ url: options.serverUrl }]
      : [
          {
            url: 'https://{restApiId}.execute-api.{region}.amazonaws.com/{stage}',
            description: 'the deployed API (the stack output ApiUrl)',
            variables: {
              restApiId: { default: 'restApiId' },
              region: { default: 'us-east-1' },
              stage: { default: 'dev' },
            },
          },
        ],
    security: [{ [SIGV4_SCHEME]: [] }],
    paths,
    components: { schemas, securitySchemes: SECURITY_SCHEMES },
  };
}
