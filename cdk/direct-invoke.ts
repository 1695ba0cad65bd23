/**
 * Direct invocation of the API functions (the Lambda Invoke API, lib/http/direct-invocation.ts): who may, and the
 * function names callers need.
 *
 * Invoking a function directly skips API Gateway, and with it the per-route authorization (the event carries no
 * caller identity the caller could not have written). So a caller role may invoke a function only when it may call
 * every route that function serves with every field (lib/http/roles.ts leastInvokerRole): the validator role
 * gets spend, unspend, get-utxo and status; blockValidation also create (whose create fields minedBlocks, locked and
 * conflicting are blockValidation's), get and set-mined; admin every API function. Each of the API's three roles
 * gets that identity grant on the unqualified function only; the principals listed per role in the config
 * (`-c validatorInvokers=arn,...`) are allowed by its resource policy, which denies every other principal. The
 * gateway alias API Gateway invokes, and its version, deny every IAM principal, these included
 * (cdk/function-policy.ts): an invocation of the alias is API Gateway's, and only then does the function believe the
 * signer an event names (lib/http/caller.ts).
 */
import { CfnOutput } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { API_ROLES, leastInvokerRole as leastRole, roleAllows, type ApiRole } from '../lib/http/roles';
import { ROUTE_TABLE } from '../lib/http/route-table';
import { ROUTES, type Route } from './api';
import type { FunctionName, UtxoStoreConfig } from './config';
import { FunctionPolicy, gatewayPolicyDocument, INVOKE_ACTION, invokePolicyDocument } from './function-policy';
import type { GatewayAlias } from './functions';

/** The least role that may call every route a function serves, with every field; undefined: it serves none. */
export function leastInvokerRole(fn: FunctionName, routes: readonly Route[] = ROUTES): ApiRole | undefined {
  // the route table's restricted fields, by route (cdk's ROUTES carry method, path, function and role)
  const withFields = routes.map((r) => ({
    ...r,
    restrictedFields: ROUTE_TABLE.find((t) => t.method === r.method && t.path === r.path)?.restrictedFields,
  }));
  return leastRole(fn, withFields);
}

export interface DirectInvokeProps {
  config: UtxoStoreConfig;
  /** the unqualified functions: what direct invokers invoke */
  functions: Record<FunctionName, lambda.IFunction>;
  /** each API function's gateway alias and its version (cdk/functions.ts) */
  gateway: Partial<Record<FunctionName, GatewayAlias>>;
  roles: Record<ApiRole, iam.IRole>;
  /** per function: the execute-api ARNs API Gateway invokes it from (cdk/api.ts) */
  sourceArns: Partial<Record<FunctionName, string[]>>;
}

export class DirectInvoke extends Construct {
  /** function -> the least caller role allowed to invoke it */
  readonly invokerRoles: Partial<Record<FunctionName, ApiRole>> = {};
  /** function -> its resource policies (the function's, its gateway alias's, the alias's version's) */
  readonly policies: Partial<Record<FunctionName, FunctionPolicy>> = {};

  constructor(scope: Construct, id: string, props: DirectInvokeProps) {
    super(scope, id);
    for (const [fn, target] of Object.entries(props.functions) as [FunctionName, lambda.IFunction][]) {
      const least = leastInvokerRole(fn);
      if (least === undefined) continue; // the signal consumer and the scheduled cleanup serve no route
      const gateway = props.gateway[fn];
      if (!gateway) throw new Error(`the ${fn} function serves routes but has no gateway alias`);
      this.invokerRoles[fn] = least;
      const roles = API_ROLES.filter((role) => roleAllows(role, least));
      // the unqualified function only (not `<arn>:*`): the alias and its version are API Gateway's
      for (const role of roles)
        iam.Grant.addToPrincipal({
          grantee: props.roles[role],
          actions: [INVOKE_ACTION],
          resourceArns: [target.functionArn],
        });
      const name = fn.charAt(0).toUpperCase() + fn.slice(1);
      const invoke = {
        roleArns: roles.map((role) => props.roles[role].roleArn),
        invokers: roles.flatMap((role) => props.config.directInvokers[role]),
      };
      const sourceArns = props.sourceArns[fn] ?? [];
      this.policies[fn] = new FunctionPolicy(this, name, [
        { fn: target, document: (arn) => invokePolicyDocument(arn, invoke) },
        { fn: gateway.alias, document: (arn) => gatewayPolicyDocument(arn, sourceArns) },
        { fn: gateway.version, document: (arn) => gatewayPolicyDocument(arn, []) },
      ]);
      new CfnOutput(scope, `${name}FunctionName`, {
        value: target.functionName,
        description: `direct invocation (Lambda Invoke, {route, body}): role ${least} or above (README, "Two ways in")`,
      });
    }
  }
}
