/**
 * Who called, as far as a function can know (docs/security.md, "Direct invocation" and "What a validator is trusted
 * with"): the way in (API Gateway or the Lambda Invoke API), the caller's ARN when API Gateway gives it, and the
 * caller's role.
 *
 * - Through API Gateway (IAM authorization), `requestContext.identity.userArn` is the signer: for the API's roles an
 *   STS assumed-role ARN `arn:aws:sts::<account>:assumed-role/<RoleName>/<session>`. The CDK app gives every API
 *   function the three roles' names (API_CALLER_ROLES=validator=<name>,blockValidation=<name>,admin=<name>). The
 *   caller's role is the highest of the route's own role (API Gateway authorized the caller for it) and the role its
 *   ARN names.
 * - Through the Lambda Invoke API, the event carries no caller identity that the caller could not have written itself.
 *   Only the principals the function's resource policy allows can invoke it (cdk/function-policy.ts): the roles that
 *   may call every route and every field of the function, and their configured invokers. The caller's role is then
 *   that least invoker role (lib/http/roles.ts leastInvokerRole). The same holds for an API Gateway-shaped event
 *   sent with Invoke: its sender is one of those principals, allowed everything the function does anyway.
 * - Outside Lambda (the local server, tests) there are no roles: API_CALLER_ROLES is unset, every role is allowed.
 *   Inside Lambda without API_CALLER_ROLES, only the route's own role is (fail closed).
 *
 * What the function can verify (security review N9): nothing in the event. Lambda gives no caller identity for an
 * IAM-signed Invoke, and an allowed direct invoker can write an event shaped like API Gateway's, naming any signer.
 * So `path` and `arn` are what the event claims (`claimed`), and a line logs them as such. Inside Lambda an event is
 * taken for API Gateway's only when it carries what API Gateway always sets on a REST proxy event
 * (requestContext.requestId, apiId, stage, requestTimeEpoch, identity.sourceIp; a hand-made event usually lacks
 * some): otherwise it came through the Invoke API, is logged `direct`, and the signer it names is not believed (the
 * route's own role: fail closed). A complete forgery is not detected; what bounds it is the function's resource
 * policy (only roles that may call every route with every restricted field may invoke it) and CloudTrail's Lambda
 * data events, outside the function.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { API_ROLES, roleAllows, type ApiRole } from './roles';

export type InvokerPath = 'api' | 'direct' | 'local';

export interface Caller {
  /** the way in, as the event's shape claims it */
  path: InvokerPath;
  /** the signer's ARN (API Gateway only), as the event claims it */
  arn?: string;
  /** the least role the request is known to hold */
  role: ApiRole;
  /** an API Gateway-shaped event without the fields API Gateway always sets: not believed (logged as direct) */
  incomplete?: boolean;
}

/** The requestContext fields API Gateway sets on every REST API proxy event (a hand-made event may lack them). */
export const API_GATEWAY_CONTEXT_FIELDS = [
  'requestId',
  'apiId',
  'stage',
  'requestTimeEpoch',
  'identity.sourceIp',
] as const;

/** The first field API Gateway always sets that the event lacks; undefined when it has them all. */
export function missingGatewayField(event: APIGatewayProxyEvent): string | undefined {
  const context = event.requestContext as unknown as Record<string, unknown> | undefined;
  for (const field of API_GATEWAY_CONTEXT_FIELDS) {
    let value: unknown = context;
    for (const part of field.split('.'))
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
    if (value === undefined || value === null || value === '') return `requestContext.${field}`;
  }
  return undefined;
}

/** `validator=<RoleName>,blockValidation=<RoleName>,admin=<RoleName>` -> role name -> role */
export function parseCallerRoles(value: string | undefined): Map<string, ApiRole> | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const out = new Map<string, ApiRole>();
  for (const pair of value.split(',')) {
    const [role, name] = pair.split('=').map((s) => s.trim());
    if (!(API_ROLES as readonly string[]).includes(role) || !name)
      throw new Error(`API_CALLER_ROLES: expected role=<IAM role name>,..., got "${pair}"`);
    out.set(name, role as ApiRole);
  }
  return out;
}

const ASSUMED_ROLE = /^arn:aws[a-z-]*:sts::\d{12}:assumed-role\/([^/]+)\/.+$/;

function higher(a: ApiRole, b: ApiRole): ApiRole {
  return roleAllows(a, b) ? a : b;
}

export interface CallerSource {
  event: APIGatewayProxyEvent;
  /** the event was built from a direct invocation ({route, body}) */
  direct: boolean;
  /** the route's own least role */
  routeRole: ApiRole;
  /** the least role that may invoke this function directly */
  directRole: ApiRole;
  env?: NodeJS.ProcessEnv;
}

export function callerOf(s: CallerSource): Caller {
  const env = s.env ?? process.env;
  const arn = s.event.requestContext?.identity?.userArn ?? undefined;
  const roles = parseCallerRoles(env.API_CALLER_ROLES);
  if (!roles) {
    const inLambda = env.AWS_LAMBDA_FUNCTION_NAME !== undefined;
    if (!inLambda) return { path: s.direct ? 'direct' : 'local', ...(arn ? { arn } : {}), role: 'admin' };
  }
  if (s.direct) return { path: 'direct', role: higher(s.routeRole, s.directRole) };
  // not from API Gateway: it came through Invoke; the signer it names is not believed
  if (missingGatewayField(s.event) !== undefined) return { path: 'direct', role: s.routeRole, incomplete: true };
  const name = arn ? ASSUMED_ROLE.exec(arn)?.[1] : undefined;
  const named = name !== undefined ? roles?.get(name) : undefined;
  return { path: 'api', ...(arn ? { arn } : {}), role: named ? higher(s.routeRole, named) : s.routeRole };
}
