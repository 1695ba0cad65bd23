/**
 * The synthesised templates as IAM evaluates them (test/cdk/iam-simulation-*.test.ts): the CloudFormation intrinsics
 * the policies use resolved for a fixed account, region and partition (Ref, Fn::GetAtt, Fn::Join, Fn::Sub,
 * Fn::Select, Fn::ImportValue), the policies of a principal and of a resource extracted as deployed, and one request
 * evaluated by @cloud-copilot/iam-simulate with the identity, resource and VPC endpoint policies that apply to it.
 *
 * Physical names are not known before deployment: a resource's name here is its logical id, the same wherever a Ref
 * or a GetAtt names it, which is all a policy comparison needs.
 */
import { anonymousPrincipal, runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';

export const ACCOUNT = '111111111111';
/** AWS's own account in these requests (the owner of the Amazon Linux repository buckets) */
export const AWS_OWNED_ACCOUNT = '999999999999';

type Json = Record<string, unknown>;
export interface Resource {
  Type: string;
  Properties?: Json;
  [k: string]: unknown;
}
export interface Env {
  account: string;
  region: string;
  partition: string;
  resources: Record<string, Resource>;
  /** exports of the other stacks: name -> value (Fn::ImportValue) */
  exports: Record<string, unknown>;
}
export type Policy = { Version?: string; Statement: Json[] };

// (not named `exports`: under CommonJS that name would hide the module's own exports, ACCOUNT among them)
export function envOf(template: Json, region: string, imported: Record<string, unknown> = {}): Env {
  return {
    account: ACCOUNT,
    region,
    partition: 'aws',
    resources: template.Resources as Record<string, Resource>,
    exports: imported,
  };
}

/** A template's exported outputs, for the stacks that import them. */
export function exportsOf(template: Json): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of Object.values(
    (template.Outputs ?? {}) as Record<string, { Value: unknown; Export?: { Name: string } }>,
  ))
    if (o.Export) out[o.Export.Name] = o.Value;
  return out;
}

const PSEUDO = (env: Env): Record<string, string> => ({
  'AWS::AccountId': env.account,
  'AWS::Region': env.region,
  'AWS::Partition': env.partition,
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': 'stack',
  'AWS::NoValue': '',
});

function arn(env: Env, service: string, resource: string, region = env.region, account = env.account): string {
  return `arn:${env.partition}:${service}:${region}:${account}:${resource}`;
}

/** What Ref of a resource returns. */
function ref(env: Env, id: string): string {
  const pseudo = PSEUDO(env)[id];
  if (pseudo !== undefined) return pseudo;
  const r = env.resources[id];
  if (r === undefined) return `param-${id}`; // a template parameter
  const p = r.Properties ?? {};
  switch (r.Type) {
    case 'AWS::SQS::Queue':
      return `https://sqs.${env.region}.amazonaws.com/${env.account}/${id}`;
    case 'AWS::SSM::Parameter':
      return String(resolve(p.Name, env));
    case 'AWS::Logs::LogGroup':
      return p.LogGroupName !== undefined ? String(resolve(p.LogGroupName, env)) : id;
    case 'AWS::Lambda::Alias':
      return `${getAtt(env, String((p.FunctionName as { Ref: string }).Ref), 'Arn')}:${String(p.Name)}`;
    case 'AWS::Lambda::Version':
      return `${getAtt(env, String((p.FunctionName as { Ref: string }).Ref), 'Arn')}:1`;
    case 'AWS::ApiGateway::RestApi':
      return id.toLowerCase();
    case 'AWS::EC2::VPCEndpoint':
      return `vpce-${id.toLowerCase()}`;
    default:
      return id;
  }
}

function getAtt(env: Env, id: string, attr: string): string {
  const r = env.resources[id];
  if (r === undefined) throw new Error(`GetAtt of unknown resource ${id}`);
  const name = ref(env, id);
  if (attr === 'Arn')
    switch (r.Type) {
      case 'AWS::IAM::Role':
        return `arn:${env.partition}:iam::${env.account}:role/${name}`;
      case 'AWS::Lambda::Function':
        return arn(env, 'lambda', `function:${name}`);
      case 'AWS::S3::Bucket':
        return `arn:${env.partition}:s3:::${name.toLowerCase()}`;
      case 'AWS::SQS::Queue':
        return arn(env, 'sqs', id);
      case 'AWS::Logs::LogGroup':
        return arn(env, 'logs', `log-group:${name}:*`);
      case 'AWS::Events::Rule':
        return arn(env, 'events', `rule/${name}`);
      case 'AWS::KMS::Key':
        return arn(env, 'kms', `key/${name}`);
      case 'AWS::SNS::Topic':
        return arn(env, 'sns', name);
      default:
        return arn(env, r.Type.split('::')[1].toLowerCase(), name);
    }
  if (attr === 'QueueName') return id;
  if (attr === 'Version') return '1';
  if (attr === 'RootResourceId') return `${id}-root`;
  return `${id}.${attr}`;
}

/** Ref of an S3 bucket is its name: lower case, as S3 requires. */
function bucketAware(env: Env, id: string): string {
  return env.resources[id]?.Type === 'AWS::S3::Bucket' ? id.toLowerCase() : ref(env, id);
}

/** The value with every intrinsic resolved. */
export function resolve(v: unknown, env: Env): unknown {
  if (Array.isArray(v)) return v.map((x) => resolve(x, env));
  if (v === null || typeof v !== 'object') return v;
  const o = v as Json;
  const keys = Object.keys(o);
  if (keys.length === 1) {
    const [k] = keys;
    const a = o[k];
    if (k === 'Ref') return bucketAware(env, String(a));
    if (k === 'Fn::GetAtt') {
      const [id, attr] = Array.isArray(a) ? (a as string[]) : String(a).split('.');
      return getAtt(env, id, attr);
    }
    if (k === 'Fn::Join') {
      const [sep, parts] = a as [string, unknown[]];
      return (resolve(parts, env) as unknown[]).map(String).join(sep);
    }
    if (k === 'Fn::Select') {
      const [i, list] = a as [number | string, unknown];
      return (resolve(list, env) as unknown[])[Number(i)];
    }
    if (k === 'Fn::Split') {
      const [sep, str] = a as [string, unknown];
      return String(resolve(str, env)).split(sep);
    }
    if (k === 'Fn::GetAZs') return ['a', 'b', 'c'].map((z) => `${env.region}${z}`);
    if (k === 'Fn::ImportValue') {
      const name = String(resolve(a, env));
      return name in env.exports ? resolve(env.exports[name], env) : `import-${name}`;
    }
    if (k === 'Fn::Sub') {
      const [text, vars] = (Array.isArray(a) ? a : [a, {}]) as [string, Json];
      return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
        if (name in vars) return String(resolve(vars[name], env));
        if (name.includes('.')) {
          const [id, attr] = name.split('.');
          return getAtt(env, id, attr);
        }
        return bucketAware(env, name);
      });
    }
  }
  return Object.fromEntries(keys.map((k) => [k, resolve(o[k], env)]));
}

function doc(v: unknown, env: Env): Policy {
  return resolve(v, env) as Policy;
}

/** The role of a Lambda function (its logical id). */
export function roleOfFunction(env: Env, fnId: string): string {
  return (env.resources[fnId].Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
}

/** The identity policies of a role: its AWS::IAM::Policy documents and inline policies (managed policies: by name). */
export function identityPolicies(env: Env, roleId: string): { name: string; policy: Policy }[] {
  const out: { name: string; policy: Policy }[] = [];
  for (const [id, r] of Object.entries(env.resources)) {
    if (r.Type !== 'AWS::IAM::Policy') continue;
    const roles = (r.Properties!.Roles ?? []) as { Ref?: string }[];
    if (roles.some((x) => x.Ref === roleId)) out.push({ name: id, policy: doc(r.Properties!.PolicyDocument, env) });
  }
  for (const p of (env.resources[roleId].Properties!.Policies ?? []) as {
    PolicyName: string;
    PolicyDocument: unknown;
  }[])
    out.push({ name: p.PolicyName, policy: doc(p.PolicyDocument, env) });
  return out;
}

export function roleArn(env: Env, roleId: string): string {
  return getAtt(env, roleId, 'Arn');
}

/** The AWS::Lambda::ResourcePolicy of exactly this function, alias or version ARN. */
export function lambdaPolicy(env: Env, resourceArn: string): Policy | undefined {
  const found = Object.values(env.resources).filter(
    (r) => r.Type === 'AWS::Lambda::ResourcePolicy' && resolve(r.Properties!.ResourceArn, env) === resourceArn,
  );
  if (found.length > 1) throw new Error(`${found.length} resource policies for ${resourceArn}`);
  return found[0] && doc(found[0].Properties!.PolicyDocument, env);
}

/** An endpoint's policy as the VPC applies it (CDK writes the any-principal as {"AWS":"*"}, endpoint policies "*"). */
export function endpointPolicy(env: Env, service: string): Policy {
  const found = Object.values(env.resources).find(
    (r) =>
      r.Type === 'AWS::EC2::VPCEndpoint' && String(resolve(r.Properties!.ServiceName, env)).endsWith(`.${service}`),
  );
  if (!found) throw new Error(`no ${service} endpoint`);
  const policy = doc(found.Properties!.PolicyDocument, env);
  return {
    ...policy,
    Statement: policy.Statement.map((st) =>
      JSON.stringify(st.Principal) === '{"AWS":"*"}' ? { ...st, Principal: '*' } : st,
    ),
  };
}

function policyOn(env: Env, type: string, prop: string, targetId: string): Policy | undefined {
  const found = Object.values(env.resources).find(
    (r) => r.Type === type && JSON.stringify(r.Properties![prop]).includes(`"${targetId}"`),
  );
  return found && doc(found.Properties!.PolicyDocument, env);
}

export const bucketPolicy = (env: Env, bucketId: string) => policyOn(env, 'AWS::S3::BucketPolicy', 'Bucket', bucketId);
export const queuePolicy = (env: Env, queueId: string) => policyOn(env, 'AWS::SQS::QueuePolicy', 'Queues', queueId);

/** The API's resource policy, `execute-api:/...` written out as the stage's ARNs (what API Gateway does). */
export function restApiPolicy(env: Env, apiId: string): Policy | undefined {
  const policy = env.resources[apiId].Properties!.Policy;
  if (policy === undefined) return undefined;
  const text = JSON.stringify(resolve(policy, env)).replace(
    /"execute-api:\//g,
    `"${arn(env, 'execute-api', `${ref(env, apiId)}/`)}`,
  );
  return JSON.parse(text) as Policy;
}

export type Verdict = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

export interface Request {
  /** an IAM principal ARN, a service principal (apigateway.amazonaws.com), or 'anonymous' */
  principal: string;
  action: string;
  resource: string;
  /** the account owning the resource (default this account) */
  resourceAccount?: string;
  context?: Record<string, string | string[]>;
  identity?: { name: string; policy: Policy }[];
  resourcePolicy?: Policy;
  endpoint?: Policy;
}

/** The request's verdict; the principal's global keys filled in as AWS would (aws:PrincipalArn, ...). */
export async function evaluate(r: Request): Promise<Verdict> {
  const anonymous = r.principal === 'anonymous';
  const service = !anonymous && !r.principal.startsWith('arn:');
  const account = anonymous || service ? undefined : r.principal.split(':')[4];
  const resourceAccount = r.resourceAccount ?? ACCOUNT;
  const context: Record<string, string | string[]> = {
    'aws:SecureTransport': 'true',
    ...(anonymous ? {} : { 'aws:PrincipalIsAWSService': String(service) }),
    ...(account !== undefined && {
      'aws:PrincipalArn': principalArn(r.principal),
      'aws:PrincipalAccount': account,
    }),
    ...(r.endpoint && { 'aws:ResourceAccount': resourceAccount }),
    ...r.context,
  };
  const simulation: Simulation = {
    request: {
      principal: anonymous ? anonymousPrincipal : r.principal,
      action: r.action,
      resource: { resource: r.resource, accountId: resourceAccount },
      contextVariables: context,
    },
    identityPolicies: r.identity ?? [],
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: r.resourcePolicy,
    vpcEndpointPolicies: r.endpoint ? [{ name: 'endpoint', policy: r.endpoint }] : undefined,
  };
  const result = await runSimulation(simulation, {});
  if (result.resultType === 'error') throw new Error(`simulation error: ${JSON.stringify(result.errors)}`);
  return result.overallResult as Verdict;
}

/** aws:PrincipalArn of a role session is the role's ARN. */
function principalArn(principal: string): string {
  const m = /^arn:aws:sts::(\d{12}):assumed-role\/([^/]+)\//.exec(principal);
  return m ? `arn:aws:iam::${m[1]}:role/${m[2]}` : principal;
}

/** A deep copy of a template to mutate. */
export function copyOf<T>(template: T): T {
  return JSON.parse(JSON.stringify(template)) as T;
}
