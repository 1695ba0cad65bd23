/**
 * The full resource policy of each API function (AWS::Lambda::ResourcePolicy, one document per function, alias and
 * version; docs/security.md, "Direct invocation"). It closes the second way in: a principal whose own IAM policy
 * allows lambda:InvokeFunction on the function (lambda:* on *, PowerUserAccess, a CI role) could otherwise run
 * every route the function serves with a hand-made event, skipping API Gateway's per-route authorization. Lambda
 * evaluates the policy of the ARN an invocation names: the unqualified function's, or the alias's or version's own.
 *
 * The unqualified function (direct invocation, cdk/direct-invoke.ts):
 *   Allow   the configured invokers of the roles that may invoke it (-c validatorInvokers=..., role or user ARNs)
 *   Deny    every other IAM principal: aws:PrincipalIsAWSService false and aws:PrincipalArn not one of the API roles
 *           that may invoke the function nor a configured invoker of such a role
 * The gateway alias (lib/http/gateway-alias.ts; the function believes an API Gateway event only under it):
 *   Allow   apigateway.amazonaws.com, only from this API's routes of the function (aws:SourceArn, aws:SourceAccount)
 *   Deny    every IAM principal, the API roles and the configured invokers included
 * The alias's version: Deny every IAM principal (nothing invokes it by its number).
 *
 * A Deny in a resource policy wins over any Allow in the caller's identity policy (same account or not), so a broad
 * grant elsewhere no longer opens the function. The document replaces every AWS::Lambda::Permission of the function
 * (AWS: "don't use both resource types"): API Gateway's permissions are here, none is added elsewhere.
 *
 * What it does not stop: a principal that may assume one of the API roles (their trust policy, cdk/api.ts), and a
 * principal that may change the function, its policies or the stack (lambda:UpdateFunctionCode, PutResourcePolicy,
 * UpdateAlias, cloudformation:UpdateStack).
 */
import { Aws } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export const INVOKE_ACTION = 'lambda:InvokeFunction';
/**
 * Every IAM action that runs a function: InvokeFunction (also InvokeWithResponseStream's), the deprecated
 * InvokeAsync (a separate action, fire-and-forget) and InvokeFunctionUrl (a function URL with AWS_IAM auth; the
 * functions have none, and the Deny keeps one added later closed). The Deny names each, not `lambda:Invoke*`.
 */
export const INVOKE_ACTIONS = ['lambda:InvokeFunction', 'lambda:InvokeAsync', 'lambda:InvokeFunctionUrl'];

export interface InvokePolicy {
  /** IAM role ARNs inside the stack that may invoke it (their identity policies grant it) */
  roleArns: string[];
  /** configured invokers (role or user ARNs, possibly of another account): allowed here */
  invokers: string[];
}

/** Allow an AWS service to invoke, only from the given source ARNs of this account. */
function servicePrincipalAllow(sid: string, service: string, resourceArn: string, sourceArns: string[]) {
  return new iam.PolicyStatement({
    sid,
    principals: [new iam.ServicePrincipal(service)],
    actions: [INVOKE_ACTION],
    resources: [resourceArn],
    conditions: {
      ArnLike: { 'aws:SourceArn': sourceArns },
      StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
    },
  });
}

/** Deny every IAM principal but `allowed` every invoke action (AWS services are not IAM principals here). */
function denyOtherPrincipals(resourceArn: string, allowed: string[]) {
  return new iam.PolicyStatement({
    sid: 'DenyOtherPrincipals',
    effect: iam.Effect.DENY,
    principals: [new iam.AnyPrincipal()],
    actions: INVOKE_ACTIONS,
    resources: [resourceArn],
    conditions: {
      Bool: { 'aws:PrincipalIsAWSService': 'false' },
      ...(allowed.length > 0 && { ArnNotLike: { 'aws:PrincipalArn': allowed } }),
    },
  });
}

/** The unqualified function's document: its direct invokers (no AWS service: API Gateway invokes the alias). */
export function invokePolicyDocument(resourceArn: string, p: InvokePolicy): iam.PolicyDocument {
  const doc = new iam.PolicyDocument();
  if (p.invokers.length > 0)
    doc.addStatements(
      new iam.PolicyStatement({
        sid: 'ConfiguredInvokers',
        principals: p.invokers.map((arn) => new iam.ArnPrincipal(arn)),
        actions: [INVOKE_ACTION],
        resources: [resourceArn],
      }),
    );
  doc.addStatements(denyOtherPrincipals(resourceArn, [...p.roleArns, ...p.invokers]));
  return doc;
}

/**
 * The gateway alias's document: API Gateway from `apiSourceArns` (none: no one, for the alias's version), and a Deny
 * of every IAM principal without exception.
 */
export function gatewayPolicyDocument(resourceArn: string, apiSourceArns: string[]): iam.PolicyDocument {
  const doc = new iam.PolicyDocument();
  if (apiSourceArns.length > 0)
    doc.addStatements(servicePrincipalAllow('ApiGateway', 'apigateway.amazonaws.com', resourceArn, apiSourceArns));
  doc.addStatements(denyOtherPrincipals(resourceArn, []));
  return doc;
}

export interface TriggerPolicy {
  /** EventBridge rules that invoke the function (events.amazonaws.com with aws:SourceArn one of them) */
  ruleArns: string[];
  /**
   * the function's own execution role: an SQS event source mapping reads the queue with it and Lambda invokes the
   * function; if Lambda presents that invocation as the role, the Deny must not catch it
   */
  ownRoleArn?: string;
}

/**
 * The policy of a function no caller invokes (the signal consumer, the scheduled cleanup): only its triggers. Allow
 * EventBridge from its own rules; Deny every IAM principal (but its own role) every invoke action.
 */
export function triggerPolicyDocument(resourceArn: string, p: TriggerPolicy): iam.PolicyDocument {
  const doc = new iam.PolicyDocument();
  if (p.ruleArns.length > 0)
    doc.addStatements(servicePrincipalAllow('EventBridgeRules', 'events.amazonaws.com', resourceArn, p.ruleArns));
  doc.addStatements(denyOtherPrincipals(resourceArn, p.ownRoleArn !== undefined ? [p.ownRoleArn] : []));
  return doc;
}

/** One ARN a caller can name in an invocation (the function, an alias, a version) and its document. */
export interface PolicyTarget {
  fn: lambda.IFunction;
  /** the document of its ARN (invokePolicyDocument, gatewayPolicyDocument or triggerPolicyDocument) */
  document: (resourceArn: string) => iam.PolicyDocument;
}

/** One AWS::Lambda::ResourcePolicy per ARN a caller can invoke: the function first, then its alias and version. */
export class FunctionPolicy extends Construct {
  readonly policies: lambda.CfnResourcePolicy[] = [];

  constructor(scope: Construct, id: string, targets: PolicyTarget[]) {
    super(scope, id);
    targets.forEach(({ fn, document }, i) => {
      const arn = fn.functionArn;
      const policy = new lambda.CfnResourcePolicy(this, i === 0 ? 'Function' : `Qualified${i}`, {
        resourceArn: arn,
        policyDocument: document(arn),
      });
      policy.node.addDependency(fn);
      this.policies.push(policy);
    });
  }
}
