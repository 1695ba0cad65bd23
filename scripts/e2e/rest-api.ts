/**
 * The REST API of the template as API Gateway serves it, locally: the resource tree and methods (AWS::ApiGateway::
 * Resource/Method), each method's Lambda proxy integration, IAM authorization evaluated on the execute-api ARN
 * against the caller role's identity policies and the API's resource policy, the request validator (required
 * parameters, the body model's required properties), the gateway responses of the template, and the proxy event
 * (REST v1 format) with the identity an assumed role's SigV4 request carries. The function is invoked through
 * e2e/lambda-host.ts; its proxy result becomes the HTTP answer (a malformed result or a function error is 502, as
 * API Gateway answers).
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { proxyIdentity } from '../../lib/http/proxy-identity';
import type { Assembly, StackArtifact } from './assembly';
import { AssemblyError, resourcesOfType } from './assembly';
import { resolveValue, type Resolver } from './intrinsics';

export interface ApiMethod {
  logicalId: string;
  httpMethod: string;
  /** /v1/txs/{txid} */
  resourcePath: string;
  authorizationType: string;
  /** logical id of the integrated function */
  functionId: string;
  /** the alias the integration URI names (API Gateway invokes `<function ARN>:<alias>`); undefined: unqualified */
  qualifier?: string;
  requiredQuery: string[];
  optionalQuery: string[];
  requiredPath: string[];
  /** the body model's required properties; undefined without a model */
  requiredBody?: string[];
  validateBody: boolean;
  validateParameters: boolean;
}

export interface CallerRole {
  logicalId: string;
  arn: string;
  name: string;
  /** the role's identity statements (resolved) */
  statements: PolicyStatement[];
}

export interface PolicyStatement {
  Effect: 'Allow' | 'Deny';
  Action: string[];
  Resource: string[];
  Condition?: Record<string, Record<string, string[]>>;
}

export interface RestApiModel {
  stack: StackArtifact;
  apiId: string;
  stage: string;
  methods: ApiMethod[];
  resourcePolicy: PolicyStatement[];
  gatewayResponses: Map<string, { statusCode?: string; template?: string }>;
  region: string;
  accountId: string;
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

function statementsOf(r: Resolver, stack: StackArtifact, doc: unknown, where: string): PolicyStatement[] {
  return asList((doc as { Statement?: unknown }).Statement ?? []).map((s, i) => {
    const st = s as Record<string, unknown>;
    const condition = st.Condition as Record<string, Record<string, unknown>> | undefined;
    const resolvedCondition: PolicyStatement['Condition'] = condition
      ? Object.fromEntries(
          Object.entries(condition).map(([op, kv]) => [
            op,
            Object.fromEntries(
              Object.entries(kv).map(([k, v]) => [
                k,
                asList(v).map((x) => resolveValue(r, stack, x, `${where}[${i}].Condition`)),
              ]),
            ),
          ]),
        )
      : undefined;
    return {
      Effect: st.Effect as 'Allow' | 'Deny',
      Action: asList(st.Action).map(String),
      Resource: asList(st.Resource ?? '*').map((x) => resolveValue(r, stack, x, `${where}[${i}].Resource`)),
      Condition: resolvedCondition,
    };
  });
}

/**
 * The function a proxy integration URI invokes (`.../functions/<fn arn>/invocations`): its logical id, and the alias
 * the URI names, if any (Lambda then reports the alias ARN as the invoked ARN).
 */
function integratedFunction(
  stack: StackArtifact,
  uri: unknown,
  where: string,
): { functionId: string; qualifier?: string } {
  const found: string[] = [];
  const aliases: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const att = (v as Record<string, unknown>)['Fn::GetAtt'] as [string, string] | undefined;
      const ref = (v as Record<string, unknown>).Ref as string | undefined;
      const id = att?.[0] ?? ref;
      if (id && stack.template.Resources[id]) {
        const type = stack.template.Resources[id].Type;
        if (type === 'AWS::Lambda::Function') found.push(id);
        else if (type === 'AWS::Lambda::Alias') {
          aliases.push(String(stack.template.Resources[id].Properties?.Name));
          walk(stack.template.Resources[id].Properties?.FunctionName);
        }
      }
      Object.values(v).forEach(walk);
    }
  };
  walk(uri);
  const unique = [...new Set(found)];
  if (unique.length !== 1) throw new AssemblyError(`${where}: the integration invokes ${unique.length} functions`);
  if (aliases.length > 1) throw new AssemblyError(`${where}: the integration names ${aliases.length} aliases`);
  return { functionId: unique[0], ...(aliases.length === 1 ? { qualifier: aliases[0] } : {}) };
}

export function restApiModel(assembly: Assembly, r: Resolver): RestApiModel {
  const apis = resourcesOfType(assembly, 'AWS::ApiGateway::RestApi');
  if (apis.length !== 1) throw new AssemblyError(`expected one REST API, found ${apis.length}`);
  const { stack, id: apiLogicalId, resource: api } = apis[0];
  const res = stack.template.Resources;
  const pathOf = (ref: unknown): string => {
    const att = (ref as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
    if (att && att[0] === apiLogicalId && att[1] === 'RootResourceId') return '';
    const id = (ref as { Ref?: string }).Ref;
    const node = id ? res[id] : undefined;
    if (!node || node.Type !== 'AWS::ApiGateway::Resource')
      throw new AssemblyError(`resource ${JSON.stringify(ref)} is not an API resource`);
    return `${pathOf(node.Properties!.ParentId)}/${String(node.Properties!.PathPart)}`;
  };
  const validators = new Map(
    resourcesOfType(assembly, 'AWS::ApiGateway::RequestValidator').map((v) => [v.id, v.resource.Properties ?? {}]),
  );
  const methods: ApiMethod[] = resourcesOfType(assembly, 'AWS::ApiGateway::Method').map(({ id, resource }) => {
    const p = resource.Properties ?? {};
    const integration = p.Integration as { Type?: string; Uri?: unknown };
    if (integration?.Type !== 'AWS_PROXY') throw new AssemblyError(`${id}: not a Lambda proxy integration`);
    const params = (p.RequestParameters ?? {}) as Record<string, boolean>;
    const named = (kind: string, required: boolean) =>
      Object.entries(params)
        .filter(([k, v]) => k.startsWith(`method.request.${kind}.`) && v === required)
        .map(([k]) => k.slice(`method.request.${kind}.`.length));
    const modelRef = (p.RequestModels as Record<string, { Ref: string }> | undefined)?.['application/json']?.Ref;
    const schema = modelRef ? (res[modelRef]?.Properties?.Schema as { required?: string[] }) : undefined;
    const validatorId = (p.RequestValidatorId as { Ref?: string } | undefined)?.Ref;
    const validator = validatorId ? validators.get(validatorId) : undefined;
    const resourcePath = pathOf(p.ResourceId) || '/';
    return {
      logicalId: id,
      httpMethod: String(p.HttpMethod),
      resourcePath,
      authorizationType: String(p.AuthorizationType ?? 'NONE'),
      ...integratedFunction(stack, integration.Uri, id),
      requiredQuery: named('querystring', true),
      optionalQuery: named('querystring', false),
      requiredPath: named('path', true),
      requiredBody: schema ? (schema.required ?? []) : undefined,
      validateBody: validator?.ValidateRequestBody === true,
      validateParameters: validator?.ValidateRequestParameters === true,
    };
  });
  const stages = resourcesOfType(assembly, 'AWS::ApiGateway::Stage');
  if (stages.length !== 1) throw new AssemblyError(`expected one API stage, found ${stages.length}`);
  const gatewayResponses = new Map<string, { statusCode?: string; template?: string }>();
  for (const g of resourcesOfType(assembly, 'AWS::ApiGateway::GatewayResponse')) {
    const gp = g.resource.Properties ?? {};
    gatewayResponses.set(String(gp.ResponseType), {
      statusCode: gp.StatusCode as string | undefined,
      template: (gp.ResponseTemplates as Record<string, string> | undefined)?.['application/json'],
    });
  }
  return {
    stack,
    apiId: resolveValue(r, stack, { Ref: apiLogicalId }, 'RestApi'),
    stage: String(stages[0].resource.Properties!.StageName),
    methods,
    resourcePolicy: api.Properties?.Policy ? statementsOf(r, stack, api.Properties.Policy, 'RestApi.Policy') : [],
    gatewayResponses,
    region: r.pseudo['AWS::Region'],
    accountId: r.pseudo['AWS::AccountId'],
  };
}

/** The IAM roles of the stack whose identity policies grant execute-api:Invoke (the API's caller roles). */
export function callerRoles(assembly: Assembly, r: Resolver, stack: StackArtifact): Map<string, CallerRole> {
  const out = new Map<string, CallerRole>();
  for (const { id, resource } of resourcesOfType({ stacks: [stack] }, 'AWS::IAM::Policy')) {
    const statements = statementsOf(r, stack, resource.Properties!.PolicyDocument, id);
    for (const role of asList(resource.Properties!.Roles)) {
      const roleId = (role as { Ref: string }).Ref;
      const prev = out.get(roleId);
      const arn = resolveValue(r, stack, { 'Fn::GetAtt': [roleId, 'Arn'] }, id);
      out.set(roleId, {
        logicalId: roleId,
        arn,
        name: arn.slice(arn.lastIndexOf('/') + 1),
        statements: [...(prev?.statements ?? []), ...statements],
      });
    }
  }
  for (const [id, role] of out)
    if (!role.statements.some((s) => s.Action.some((a) => a === 'execute-api:Invoke' || a === 'execute-api:*')))
      out.delete(id);
  void assembly;
  return out;
}

/** IAM's ARN pattern match: `*` any run of characters, `?` one. */
export function arnMatches(pattern: string, arn: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return re.test(arn);
}

function actionMatches(patterns: string[], action: string): boolean {
  return patterns.some((p) => arnMatches(p.toLowerCase(), action.toLowerCase()));
}

/** Conditions this evaluator knows; any other makes the statement an error rather than a guess. */
function conditionHolds(condition: PolicyStatement['Condition'], context: Record<string, string>): boolean {
  for (const [op, kv] of Object.entries(condition ?? {}))
    for (const [key, values] of Object.entries(kv)) {
      const actual = context[key];
      if (actual === undefined) throw new AssemblyError(`condition key ${key} has no local value`);
      const any = values.some((v) => arnMatches(v, actual));
      if (op === 'ArnNotEquals' || op === 'ArnNotLike') {
        if (any) return false;
      } else if (op === 'ArnEquals' || op === 'ArnLike') {
        if (!any) return false;
      } else throw new AssemblyError(`condition operator ${op} is not evaluated locally`);
    }
  return true;
}

/** IAM evaluation of one request: an explicit deny wins, then an allow of the identity policy is needed. */
export function authorize(
  identity: PolicyStatement[],
  resourcePolicy: PolicyStatement[],
  action: string,
  resourceArn: string,
  context: Record<string, string>,
): 'allow' | 'implicit-deny' | 'explicit-deny' {
  const applies = (s: PolicyStatement, resourceMatch: (p: string) => boolean) =>
    actionMatches(s.Action, action) && s.Resource.some(resourceMatch) && conditionHolds(s.Condition, context);
  const execApiMatch = (p: string) => p === 'execute-api:/*' || arnMatches(p, resourceArn);
  for (const s of [...identity, ...resourcePolicy])
    if (s.Effect === 'Deny' && applies(s, execApiMatch)) return 'explicit-deny';
  return identity.some((s) => s.Effect === 'Allow' && applies(s, (p) => arnMatches(p, resourceArn)))
    ? 'allow'
    : 'implicit-deny';
}

export interface HttpRequest {
  method: string;
  /** path with query string, e.g. /v1/txs/ab?fields=fee */
  url: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** the method that served it (undefined when API Gateway answered itself) */
  method?: ApiMethod;
  /** API Gateway's own answer: its response type */
  gatewayResponse?: string;
}

interface Match {
  method: ApiMethod;
  pathParameters: Record<string, string>;
}

/** API Gateway's resource selection: literal segment, then {param}, then {proxy+}; explicit method, then ANY. */
export function matchMethod(
  methods: ApiMethod[],
  httpMethod: string,
  path: string,
): Match | 'no-resource' | 'no-method' {
  const resources = [...new Set(methods.map((m) => m.resourcePath))];
  const segments = path.split('/').filter(Boolean);
  const score = (resource: string): { params: Record<string, string>; rank: number[] } | undefined => {
    const parts = resource.split('/').filter(Boolean);
    const params: Record<string, string> = {};
    const rank: number[] = [];
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      const greedy = /^\{(\w+)\+\}$/.exec(part);
      if (greedy) {
        if (i >= segments.length) return undefined;
        params[greedy[1]] = segments.slice(i).map(decodeURIComponent).join('/');
        rank.push(0);
        return { params, rank };
      }
      if (i >= segments.length) return undefined;
      const param = /^\{(\w+)\}$/.exec(part);
      if (param) {
        params[param[1]] = decodeURIComponent(segments[i]);
        rank.push(1);
      } else if (part === segments[i]) rank.push(2);
      else return undefined;
    }
    return parts.length === segments.length ? { params, rank } : undefined;
  };
  const candidates = resources
    .map((r) => ({ r, s: score(r) }))
    .filter((c): c is { r: string; s: { params: Record<string, string>; rank: number[] } } => c.s !== undefined)
    .sort((a, b) => {
      for (let i = 0; i < Math.max(a.s.rank.length, b.s.rank.length); i++) {
        const d = (b.s.rank[i] ?? -1) - (a.s.rank[i] ?? -1);
        if (d !== 0) return d;
      }
      return 0;
    });
  if (candidates.length === 0) return 'no-resource';
  const best = candidates[0];
  const onResource = methods.filter((m) => m.resourcePath === best.r);
  const method =
    onResource.find((m) => m.httpMethod === httpMethod.toUpperCase()) ?? onResource.find((m) => m.httpMethod === 'ANY');
  return method ? { method, pathParameters: best.s.params } : 'no-method';
}

/** The execute-api ARN API Gateway authorizes a request by. */
export function executeApiArn(api: RestApiModel, httpMethod: string, path: string): string {
  return `arn:aws:execute-api:${api.region}:${api.accountId}:${api.apiId}/${api.stage}/${httpMethod.toUpperCase()}/${path.replace(/^\//, '')}`;
}

/** The proxy event of a request by an assumed role (REST API, Lambda proxy integration, v1 payload). */
export function proxyEvent(api: RestApiModel, match: Match, req: HttpRequest, role: CallerRole): APIGatewayProxyEvent {
  const url = new URL(req.url, 'https://local');
  const query: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) {
    query[k] = v;
    (multi[k] ??= []).push(v);
  }
  const host = `${api.apiId}.execute-api.${api.region}.amazonaws.com`;
  const headers: Record<string, string> = {
    Host: host,
    'User-Agent': 'bsv-utxo-store-e2e',
    'X-Amz-Date': new Date().toISOString().replace(/[-:]|\.\d{3}/g, ''),
    'X-Amz-Security-Token': 'e2e-session',
    'X-Amzn-Trace-Id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    'X-Forwarded-For': '127.0.0.1',
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
    ...(req.body !== undefined
      ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(req.body)) }
      : {}),
    ...req.headers,
  };
  const roleId = `AROA${role.logicalId
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '')
    .slice(0, 17)}`;
  const session = 'e2e';
  const now = new Date();
  return {
    resource: match.method.resourcePath,
    path: url.pathname,
    httpMethod: req.method.toUpperCase(),
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: Object.keys(query).length > 0 ? query : null,
    multiValueQueryStringParameters: Object.keys(multi).length > 0 ? multi : null,
    pathParameters: Object.keys(match.pathParameters).length > 0 ? match.pathParameters : null,
    stageVariables: null,
    requestContext: {
      accountId: api.accountId,
      apiId: api.apiId,
      authorizer: null,
      domainName: host,
      domainPrefix: api.apiId,
      extendedRequestId: randomUUID(),
      httpMethod: req.method.toUpperCase(),
      identity: {
        // what API Gateway adds for a SigV4 caller that assumed one of the stack's roles
        ...proxyIdentity('127.0.0.1', headers['User-Agent']),
        accessKey: 'ASIAE2EXAMPLE0000000',
        accountId: api.accountId,
        caller: `${roleId}:${session}`,
        user: `${roleId}:${session}`,
        userArn: `arn:aws:sts::${api.accountId}:assumed-role/${role.name}/${session}`,
      },
      path: `/${api.stage}${url.pathname}`,
      protocol: 'HTTP/1.1',
      requestId: randomUUID(),
      requestTime: now.toUTCString(),
      requestTimeEpoch: now.getTime(),
      resourceId: match.method.logicalId,
      resourcePath: match.method.resourcePath,
      stage: api.stage,
    },
    body: req.body ?? null,
    isBase64Encoded: false,
  };
}

const GATEWAY_STATUS: Record<string, number> = {
  BAD_REQUEST_BODY: 400,
  BAD_REQUEST_PARAMETERS: 400,
  MISSING_AUTHENTICATION_TOKEN: 403,
  ACCESS_DENIED: 403,
  REQUEST_TOO_LARGE: 413,
  INTEGRATION_FAILURE: 504,
  INTEGRATION_TIMEOUT: 504,
  DEFAULT_5XX: 502,
};

/** API Gateway's own answer, rendered from the template's gateway response (or its default 4xx/5xx). */
export function gatewayAnswer(api: RestApiModel, type: string, message: string, validation = ''): HttpAnswer {
  const status = GATEWAY_STATUS[type] ?? 400;
  const configured =
    api.gatewayResponses.get(type) ?? api.gatewayResponses.get(status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX');
  const body = (configured?.template ?? '{"message":$context.error.messageString}')
    .replace(/\$context\.error\.validationErrorString/g, validation)
    .replace(/\$context\.error\.messageString/g, JSON.stringify(message))
    .replace(/\$context\.error\.responseType/g, type);
  return {
    status: Number(configured?.statusCode ?? status),
    headers: { 'content-type': 'application/json', 'x-amzn-errortype': type },
    body,
    gatewayResponse: type,
  };
}

/** The request validator: required query parameters, then the body model's required properties. */
export function validateRequest(api: RestApiModel, method: ApiMethod, req: HttpRequest): HttpAnswer | undefined {
  const url = new URL(req.url, 'https://local');
  if (method.validateParameters) {
    const missing = method.requiredQuery.filter((q) => !url.searchParams.has(q));
    if (missing.length > 0)
      return gatewayAnswer(
        api,
        'BAD_REQUEST_PARAMETERS',
        'Missing required request parameters',
        `Missing required request parameters: [${missing.join(', ')}]`,
      );
  }
  if (method.validateBody && method.requiredBody !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(req.body ?? '');
    } catch {
      return gatewayAnswer(api, 'BAD_REQUEST_BODY', 'Invalid request body', 'Invalid request body');
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json))
      return gatewayAnswer(api, 'BAD_REQUEST_BODY', 'Invalid request body', 'instance type is not allowed');
    const missing = method.requiredBody.filter((k) => !Object.hasOwn(json as object, k));
    if (missing.length > 0)
      return gatewayAnswer(
        api,
        'BAD_REQUEST_BODY',
        'Invalid request body',
        `[object has missing required properties ([${missing.map((m) => `\\"${m}\\"`).join(',')}])]`,
      );
  }
  return undefined;
}
