/**
 * Who called, as far as a function can know (docs/security.md, "Direct invocation" and "What a validator is trusted
 * with"): the way in (API Gateway or the Lambda Invoke API), the caller's ARN when API Gateway gives it, and the
 * caller's role.
 *
 * - The way in is Lambda's word, not the event's (security review N9). API Gateway invokes each API function through
 *   its gateway alias, which no IAM principal may invoke (lib/http/gateway-alias.ts); direct invokers invoke the
 *   unqualified function. Lambda puts the ARN the invocation named in the context (`invokedFunctionArn`), which the
 *   invoker cannot write: inside Lambda an event is API Gateway's only when that ARN names the gateway alias.
 * - Through API Gateway (IAM authorization), `requestContext.identity.userArn` is the signer: for the API's roles an
 *   STS assumed-role ARN `arn:aws:sts::<account>:assumed-role/<RoleName>/<session>`. The CDK app gives every API
 *   function the three roles' names (API_CALLER_ROLES=validator=<name>,blockValidation=<name>,admin=<name>). The
 *   caller's role is the highest of the route's own role (API Gateway authorized the caller for it) and the role its
 *   ARN names.
 * - Through the Lambda Invoke API, the event carries no caller identity that the caller could not have written itself.
 *   Only the principals the function's resource policy allows can invoke it (cdk/function-policy.ts): the roles that
 *   may call every route and every field of the function, and their configured invokers. The caller's role is then
 *   that least invoker role (lib/http/roles.ts leastInvokerRole), whatever the event's shape: an API Gateway-shaped
 *   event sent with Invoke is direct too, and the signer it names is not believed (logged as claimed: `claimedArn`).
 * - Outside Lambda (the local server, tests) there is no qualifier and there are no roles: API_CALLER_ROLES is unset,
 *   every role is allowed. Inside Lambda without API_CALLER_ROLES, a signer names no role (fail closed).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { invokedThroughGateway } from './gateway-alias';
import { API_ROLES, roleAllows, type ApiRole } from './roles';

export type InvokerPath = 'api' | 'direct' | 'local';

export interface Caller {
  /** the way in: `api` only for an invocation of the gateway alias (inside Lambda), as Lambda reports it */
  path: InvokerPath;
  /** the signer's ARN, as API Gateway gives it (or the local event carries it) */
  arn?: string;
  /** a signer an event sent with the Invoke API names: not believed */
  claimedArn?: string;
  /** the least role the request is known to hold */
  role: ApiRole;
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
  /** the Lambda context's invokedFunctionArn: the function's ARN and the qualifier the invocation named, if any */
  invokedArn?: string;
  env?: NodeJS.ProcessEnv;
}

/** The way in, from Lambda's context alone (known before the route is: a refused request's log line says it too). */
export function invokerPath(s: Pick<CallerSource, 'direct' | 'invokedArn' | 'env'>): InvokerPath {
  const env = s.env ?? process.env;
  if (s.direct) return 'direct';
  // inside Lambda, anything but the gateway alias came through Invoke, whatever the event's shape
  if (env.AWS_LAMBDA_FUNCTION_NAME !== undefined) return invokedThroughGateway(s.invokedArn) ? 'api' : 'direct';
  return parseCallerRoles(env.API_CALLER_ROLES) ? 'api' : 'local';
}

export function callerOf(s: CallerSource): Caller {
  const env = s.env ?? process.env;
  const arn = s.event.requestContext?.identity?.userArn ?? undefined;
  const roles = parseCallerRoles(env.API_CALLER_ROLES);
  const path = invokerPath(s);
  if (!roles && env.AWS_LAMBDA_FUNCTION_NAME === undefined) return { path, ...(arn ? { arn } : {}), role: 'admin' };
  if (path === 'direct')
    // an API Gateway-shaped event sent with Invoke: the signer it names is not believed
    return { path, ...(!s.direct && arn ? { claimedArn: arn } : {}), role: higher(s.routeRole, s.directRole) };
  const name = arn ? ASSUMED_ROLE.exec(arn)?.[1] : undefined;
  const named = name !== undefined ? roles?.get(name) : undefined;
  return { path, ...(arn ? { arn } : {}), role: named ? higher(s.routeRole, named) : s.routeRole };
}
