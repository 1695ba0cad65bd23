/**
 * Direct invocation of the API functions (the Lambda Invoke API, lib/http/direct-invocation.ts): who may, and the
 * function names callers need.
 *
 * Invoking a function directly skips API Gateway, and with it the per-route authorization (a function cannot tell
 * which principal invoked it). So a caller role may invoke a function only when it may call every route that function
 * serves: the validator role gets create, spend, unspend and get-utxo; blockValidation also get and set-mined; admin
 * every API function. Each of the API's three roles gets that identity grant, and the principals listed per role in
 * the config (`-c validatorInvokers=arn,...`) get the same functions through the functions' resource policies.
 */
import { CfnOutput } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { API_ROLES, roleAllows, type ApiRole } from '../lib/http/roles';
import { ROUTES, type Route } from './api';
import type { FunctionName, UtxoStoreConfig } from './config';

/** The least role that may call every route a function serves; undefined for a function that serves none. */
export function leastInvokerRole(fn: FunctionName, routes: readonly Route[] = ROUTES): ApiRole | undefined {
  let least: ApiRole | undefined;
  for (const r of routes) {
    if (r.fn !== fn) continue;
    if (least === undefined || roleAllows(r.role, least)) least = r.role;
  }
  return least;
}

function invokerPrincipal(principal: string): iam.IPrincipal {
  return /^\d{12}$/.test(principal) ? new iam.AccountPrincipal(principal) : new iam.ArnPrincipal(principal);
}

export interface DirectInvokeProps {
  config: UtxoStoreConfig;
  functions: Record<FunctionName, lambda.IFunction>;
  roles: Record<ApiRole, iam.IRole>;
}

export class DirectInvoke extends Construct {
  /** function -> the least caller role allowed to invoke it */
  readonly invokerRoles: Partial<Record<FunctionName, ApiRole>> = {};

  constructor(scope: Construct, id: string, props: DirectInvokeProps) {
    super(scope, id);
    for (const [fn, target] of Object.entries(props.functions) as [FunctionName, lambda.IFunction][]) {
      const least = leastInvokerRole(fn);
      if (least === undefined) continue; // the signal consumer and the scheduled cleanup serve no route
      this.invokerRoles[fn] = least;
      for (const role of API_ROLES) {
        if (!roleAllows(role, least)) continue;
        target.grantInvoke(props.roles[role]);
        // a principal outside this stack is granted through the function's resource policy
        for (const principal of props.config.directInvokers[role]) target.grantInvoke(invokerPrincipal(principal));
      }
      const name = fn.charAt(0).toUpperCase() + fn.slice(1);
      new CfnOutput(scope, `${name}FunctionName`, {
        value: target.functionName,
        description: `direct invocation (Lambda Invoke, {route, body}): role ${least} or above (README, "Two ways in")`,
      });
    }
  }
}
