/**
 * Direct invocation of the API functions (the Lambda Invoke API, lib/http/direct-invocation.ts): who may, and the
 * function names callers need.
 *
 * Invoking a function directly skips API Gateway, and with it the per-route authorization (the event carries no
 * caller identity the caller could not have written). So a caller role may invoke a function only when it may call
 * every route that function serves with every field (lib/http/roles.ts leastInvokerRole): the validator role
 * gets spend, unspend, get-utxo and status; blockValidation also create (whose create fields minedBlocks, locked and
 * conflicting are blockValidation's), get and set-mined; admin every API function. Each of the API's three roles
 * gets that identity grant; the principals listed per role in the config (`-c validatorInvokers=arn,...`) are
 * allowed by the functions' resource policies, which deny every other principal (cdk/function-policy.ts).
 */
import { CfnOutput } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { API_ROLES, leastInvokerRole as leastRole, roleAllows, type ApiRole } from '../lib/http/roles';
import { ROUTE_TABLE } from '../lib/http/route-table';
import { ROUTES, type Route } from './api';
import type { FunctionName, UtxoStoreConfig } from './config';
import { FunctionPolicy, invokePolicyDocument } from './function-policy';

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
  /** what API Gateway invokes: the function, or its `live` alias */
  functions: Record<FunctionName, lambda.IFunction>;
  /** with provisioned concurrency: the unqualified function and the alias's version, besides the alias */
  qualified?: Partial<Record<FunctionName, lambda.IFunction[]>>;
  roles: Record<ApiRole, iam.IRole>;
  /** per function: the execute-api ARNs API Gateway invokes it from (cdk/api.ts) */
  sourceArns: Partial<Record<FunctionName, string[]>>;
}

export class DirectInvoke extends Construct {
  /** function -> the least caller role allowed to invoke it */
  readonly invokerRoles: Partial<Record<FunctionName, ApiRole>> = {};
  /** function -> its resource policies */
  readonly policies: Partial<Record<FunctionName, FunctionPolicy>> = {};

  constructor(scope: Construct, id: string, props: DirectInvokeProps) {
    super(scope, id);
    for (const [fn, target] of Object.entries(props.functions) as [FunctionName, lambda.IFunction][]) {
      const least = leastInvokerRole(fn);
      if (least === undefined) continue; // the signal consumer and the scheduled cleanup serve no route
      this.invokerRoles[fn] = least;
      const roles = API_ROLES.filter((role) => roleAllows(role, least));
      for (const role of roles) target.grantInvoke(props.roles[role]);
      const name = fn.charAt(0).toUpperCase() + fn.slice(1);
      const invoke = {
        apiSourceArns: props.sourceArns[fn] ?? [],
        roleArns: roles.map((role) => props.roles[role].roleArn),
        invokers: roles.flatMap((role) => props.config.directInvokers[role]),
      };
      this.policies[fn] = new FunctionPolicy(this, name, {
        fn: target,
        qualified: props.qualified?.[fn],
        document: (arn) => invokePolicyDocument(arn, invoke),
      });
      new CfnOutput(scope, `${name}FunctionName`, {
        value: target.functionName,
        description: `direct invocation (Lambda Invoke, {route, body}): role ${least} or above (README, "Two ways in")`,
      });
    }
  }
}
