/**
 * The alias API Gateway invokes each API function through (docs/security.md, "Which way in: the gateway alias").
 * cdk/functions.ts creates it on every API function and the REST API's integrations name it (cdk/api.ts); its
 * resource policy allows only apigateway.amazonaws.com from this API's routes and denies every IAM principal, the
 * direct invokers and the API roles included (cdk/function-policy.ts). Direct invokers may invoke only the
 * unqualified function.
 *
 * Lambda reports the ARN an invocation named in the context (`invokedFunctionArn`: the function ARN, or the function
 * ARN and the qualifier); the invoker cannot write it. So an invocation whose ARN names this alias came from API
 * Gateway, and only such an event's signer is believed (lib/http/caller.ts). No dependencies: cdk/ imports it.
 */
export const GATEWAY_ALIAS = 'api';

/**
 * Whether a Lambda invoked-function ARN names the gateway alias:
 * `arn:<partition>:lambda:<region>:<account>:function:<name>:<qualifier>` with the qualifier GATEWAY_ALIAS. An
 * unqualified ARN (whatever the function's name), a version, `$LATEST` or another alias is not.
 */
export function invokedThroughGateway(invokedArn: string | undefined): boolean {
  if (invokedArn === undefined) return false;
  const parts = invokedArn.split(':');
  return parts.length === 8 && parts[0] === 'arn' && parts[2] === 'lambda' && parts[5] === 'function'
    ? parts[7] === GATEWAY_ALIAS
    : false;
}
