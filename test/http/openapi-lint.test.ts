/**
 * The generated OpenAPI document, linted by Redocly's own linter (@redocly/openapi-core, the engine of `redocly
 * lint`) with its `recommended` ruleset: 0 errors. Every operation declares the SigV4 scheme and its role.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { buildOpenApi, SIGV4_SCHEME } from '../../lib/http/openapi';
import { API_ROLES } from '../../lib/http/roles';
import { ROUTES } from '../../lib/http/routes';

type Doc = {
  paths: Record<string, Record<string, { security?: unknown; 'x-required-role'?: string; responses: object }>>;
  components: { securitySchemes: Record<string, Record<string, unknown>> };
};

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
}

async function lint(doc: object): Promise<Problem[]> {
  const out = execFileSync(process.execPath, [path.join(__dirname, 'lint-openapi.mjs')], {
    input: JSON.stringify(doc),
    encoding: 'utf8',
  });
  return JSON.parse(out) as Problem[];
}

describe('OpenAPI document', () => {
  test('redocly recommended: 0 errors, with and without a server URL', async () => {
    for (const doc of [buildOpenApi(), buildOpenApi({ serverUrl: 'http://localhost:8080' })]) {
      const errors = (await lint(doc)).filter((p) => p.severity === 'error');
      expect(errors.map((e) => `${e.ruleId}: ${e.message}`)).toEqual([]);
    }
  }, 60_000);

  test('the linter does fail a document whose operation has no security (the check can fail)', async () => {
    const doc = buildOpenApi() as unknown as Doc & { security?: unknown };
    delete doc.security;
    delete doc.paths['/v1/spends'].post.security;
    const errors = (await lint(doc)).filter((p) => p.severity === 'error');
    expect(errors.map((e) => e.ruleId)).toEqual(['security-defined']);
  }, 60_000);

  test('every operation requires the SigV4 scheme and names the role of its route', () => {
    const doc = buildOpenApi() as unknown as Doc;
    expect(doc.components.securitySchemes[SIGV4_SCHEME]).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      'x-amazon-apigateway-authtype': 'awsSigv4',
    });
    for (const route of ROUTES) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      expect(op.security).toEqual([{ [SIGV4_SCHEME]: [] }]);
      expect(op['x-required-role']).toBe(route.role);
      expect(API_ROLES).toContain(route.role);
      expect(op.responses).toHaveProperty('403');
    }
  });
});
