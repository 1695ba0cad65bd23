/**
 * The REST API of docs/api.md: IAM (SigV4) authorization on every method, request validation (body and parameters), JSON access
 * logs, stage throttling, one Lambda proxy integration per route.
 *
 * Roles: one IAM role per caller role of lib/http/roles.ts (validator, blockValidation, admin), each allowed
 * execute-api:Invoke on exactly the routes of its rank and below, by method and resource path (the route table
 * names every route's role, so a new route cannot be added without one). The routes are read from the one route
 * table, lib/http/route-table.ts. API Gateway authorizes IAM requests by the ARN
 * `arn:aws:execute-api:<region>:<account>:<api>/<stage>/<METHOD>/<path>` (API Gateway developer guide, "Control
 * access for invoking an API"). With apiRestrictToRoles (default) the API's resource policy also denies every caller
 * whose aws:PrincipalArn is not one of the three roles, so a broad execute-api:* grant elsewhere in the account does
 * not open the API.
 */
import { Aws, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { API_ROLES, roleAllows, type ApiRole } from '../lib/http/roles';
import { BINARY_MEDIA_TYPE, type HttpMethod } from '../lib/http/route-spec';
import { requestShape, ROUTE_TABLE } from '../lib/http/route-table';
import { ADMIN_SESSION_HOURS, ROLE_SESSION_HOURS, type FunctionName, type UtxoStoreConfig } from './config';

export type { HttpMethod } from '../lib/http/route-spec';

/** A route as the REST API declares it: method and resource, the function it integrates, who may call it. */
export interface Route {
  method: HttpMethod;
  /** resource path, `{param}` for path parameters */
  path: string;
  fn: FunctionName;
  /** the least caller role allowed */
  role: ApiRole;
  /** required top-level JSON body properties (POST/PUT) */
  required?: string[];
  /** required query string parameters */
  query?: string[];
  /** optional query string parameters */
  optionalQuery?: string[];
}

/** `set-mined` (functions/set-mined.ts, the route table's name) -> `setMined` (the CDK app's function name) */
type Camel<S extends string> = S extends `${infer A}-${infer B}` ? `${A}${Capitalize<Camel<B>>}` : S;
function camel<S extends string>(name: S): Camel<S> {
  return name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()) as Camel<S>;
}

/**
 * The routes, read from the one route table (lib/http/route-table.ts): each with its function, least caller role and
 * what API Gateway validates before the function runs (required body fields, query parameters).
 */
export const ROUTES: Route[] = ROUTE_TABLE.map((r) => {
  const shape = requestShape(r);
  const fn: FunctionName = camel(r.fn);
  return {
    method: r.method,
    path: r.path,
    fn,
    role: r.role,
    ...(shape.requiredBody.length > 0 && { required: shape.requiredBody }),
    ...(shape.requiredQuery.length > 0 && { query: shape.requiredQuery }),
    ...(shape.optionalQuery.length > 0 && { optionalQuery: shape.optionalQuery }),
  };
});

export interface ApiProps {
  config: UtxoStoreConfig;
  /** each API function's gateway alias (lib/http/gateway-alias.ts): the only ARN the integrations invoke */
  targets: Partial<Record<FunctionName, lambda.IFunction>>;
}

const ERROR_TEMPLATE = (code: string, message: string): Record<string, string> => ({
  'application/json': `{"error":{"code":"${code}","message":${message}}}`,
});

/**
 * The access log: one JSON line per request, with the signer's ARN and account (who called: an assumed-role ARN
 * names the role and the session) and API Gateway's own error message (a denied or throttled request says why).
 */
export const ACCESS_LOG_FIELDS: Record<string, string> = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  caller: '$context.identity.caller',
  user: '$context.identity.user',
  userArn: '$context.identity.userArn',
  accountId: '$context.identity.accountId',
  requestTime: '$context.requestTime',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  path: '$context.path',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  // messageString: the message as a quoted, escaped JSON string (error.message is raw: a SigV4 error echoes the
  // request's signed headers, which could otherwise inject fields into the line)
  errorMessage: '$context.error.messageString',
  errorResponseType: '$context.error.responseType',
  integrationError: '$context.integration.error',
};
/** Variables API Gateway already renders as a quoted, escaped JSON string: written into the line without quotes. */
export const QUOTED_LOG_VARIABLES = new Set(['$context.error.messageString']);

/** The access log's format: one JSON object, each variable in quotes unless API Gateway quotes it itself. */
export function accessLogFormat(fields: Record<string, string> = ACCESS_LOG_FIELDS): string {
  const pairs = Object.entries(fields).map(
    ([key, variable]) =>
      `${JSON.stringify(key)}:${QUOTED_LOG_VARIABLES.has(variable) ? variable : JSON.stringify(variable)}`,
  );
  return `{${pairs.join(',')}}`;
}
const ACCESS_LOG_FORMAT = apigw.AccessLogFormat.custom(accessLogFormat());

/** An AWS_PROXY integration of a function, without the per-method AWS::Lambda::Permission of LambdaIntegration. */
function proxyIntegration(target: lambda.IFunction): apigw.Integration {
  return new apigw.Integration({
    type: apigw.IntegrationType.AWS_PROXY,
    integrationHttpMethod: 'POST',
    uri: `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}:lambda:path/2015-03-31/functions/${target.functionArn}/invocations`,
  });
}

/** `/v1/txs/{txid}` -> `/v1/txs/*`: the resource part of the execute-api ARN */
export function arnPath(path: string): string {
  return path.replace(/\{[^}]+\}/g, '*');
}

export class Api extends Construct {
  readonly api: apigw.RestApi;
  /** the callers' roles (assume one to call the API) */
  readonly roles = {} as Record<ApiRole, iam.Role>;
  readonly accessLogs: logs.LogGroup;
  readonly stageName: string;
  /** per function: the execute-api ARNs API Gateway invokes it from (its resource policy's aws:SourceArn) */
  readonly invokeSourceArns: Partial<Record<FunctionName, string[]>> = {};

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    const { config } = props;
    this.stageName = config.stage;

    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    for (const role of API_ROLES) {
      // The account delegates, but only to the configured principals (aws:PrincipalArn); in dev without any, to every
      // principal of the account whose own policy allows sts:AssumeRole on the role (docs/security.md)
      const assumers = config.roleAssumers[role];
      this.roles[role] = new iam.Role(this, `${role.charAt(0).toUpperCase()}${role.slice(1)}Role`, {
        assumedBy:
          assumers.length > 0
            ? new iam.AccountRootPrincipal().withConditions({ ArnLike: { 'aws:PrincipalArn': assumers } })
            : new iam.AccountRootPrincipal(),
        description: `bsv-utxo-store ${config.stage} API caller: ${role}`,
        maxSessionDuration: Duration.hours(role === 'admin' ? ADMIN_SESSION_HOURS : ROLE_SESSION_HOURS),
      });
    }
    const restrict = config.apiRestrictToRoles
      ? new iam.PolicyDocument({
          // a Deny only: callers still need their own IAM allow (the roles' policies below); nothing is granted here
          statements: [
            new iam.PolicyStatement({
              effect: iam.Effect.DENY,
              principals: [new iam.AnyPrincipal()],
              actions: ['execute-api:Invoke'],
              resources: ['execute-api:/*'],
              conditions: {
                ArnNotEquals: { 'aws:PrincipalArn': API_ROLES.map((r) => this.roles[r].roleArn) },
              },
            }),
          ],
        })
      : undefined;

    this.api = new apigw.RestApi(this, 'Api', {
      policy: restrict,
      restApiName: `bsv-utxo-store-${config.stage}`,
      description: 'bsv-utxo-store HTTP API v1 (docs/api.md); SigV4 (IAM) authorization',
      endpointTypes: [apigw.EndpointType.REGIONAL],
      // the write batches' binary bodies reach the functions base64 (isBase64Encoded), their bytes intact; an
      // octet-stream body has no request model, so API Gateway's body validator leaves it to the function
      binaryMediaTypes: [BINARY_MEDIA_TYPE],
      // execution logging (below) needs the account-level CloudWatch role
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      defaultMethodOptions: { authorizationType: apigw.AuthorizationType.IAM },
      deployOptions: {
        stageName: config.stage,
        accessLogDestination: new apigw.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        throttlingRateLimit: config.apiThrottleRateLimit,
        throttlingBurstLimit: config.apiThrottleBurstLimit,
        // the validators' cheap reads (the status function) have throttles of their own below the stage's
        methodOptions: Object.fromEntries(
          ROUTES.filter((r) => r.fn === 'status').map((r) => [
            `${r.path}/${r.method}`,
            {
              throttlingRateLimit: config.statusThrottleRateLimit,
              throttlingBurstLimit: config.statusThrottleBurstLimit,
            },
          ]),
        ),
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        // per-method metrics: the dashboard's requests and errors by route
        metricsEnabled: true,
        tracingEnabled: config.xrayTracing,
      },
    });

    // API Gateway's own 4xx answers in the API's error format (docs/api.md)
    const responses: [string, apigw.ResponseType, string, string][] = [
      ['BadBody', apigw.ResponseType.BAD_REQUEST_BODY, 'INVALID_ARGUMENT', '"$context.error.validationErrorString"'],
      [
        'BadParameters',
        apigw.ResponseType.BAD_REQUEST_PARAMETERS,
        'INVALID_ARGUMENT',
        '"$context.error.validationErrorString"',
      ],
      // the same code as the handlers' and the local server's 413 (lib/http/errors.ts)
      ['TooLarge', apigw.ResponseType.REQUEST_TOO_LARGE, 'PAYLOAD_TOO_LARGE', '"request body over 10 MiB"'],
      ['Throttled', apigw.ResponseType.THROTTLED, 'THROTTLED', '$context.error.messageString'],
      // everything else API Gateway answers itself (403 unsigned or denied, 429 quota, 502/504 integration...):
      // the envelope, with API Gateway's response type as the code
      ['Default4xx', apigw.ResponseType.DEFAULT_4XX, '$context.error.responseType', '$context.error.messageString'],
      ['Default5xx', apigw.ResponseType.DEFAULT_5XX, '$context.error.responseType', '$context.error.messageString'],
    ];
    for (const [rid, type, code, message] of responses)
      this.api.addGatewayResponse(rid, { type, templates: ERROR_TEMPLATE(code, message) });

    const validator = new apigw.RequestValidator(this, 'Validator', {
      restApi: this.api,
      validateRequestBody: true,
      validateRequestParameters: true,
    });

    // Plain proxy integrations of each function's gateway alias: a LambdaIntegration would add an
    // AWS::Lambda::Permission per method, and the alias's permissions live in one full resource policy
    // (cdk/function-policy.ts), which names the execute-api ARNs of invokeSourceArns.
    const integrations = new Map<FunctionName, apigw.Integration>();
    const integration = (fn: FunctionName): apigw.Integration => {
      let i = integrations.get(fn);
      if (!i) {
        const target = props.targets[fn];
        if (!target) throw new Error(`the ${fn} function serves routes but has no gateway alias to integrate`);
        i = proxyIntegration(target);
        integrations.set(fn, i);
      }
      return i;
    };

    for (const route of ROUTES) {
      const resource = this.api.root.resourceForPath(route.path);
      const requestParameters: Record<string, boolean> = {};
      for (const m of route.path.matchAll(/\{(\w+)\}/g)) requestParameters[`method.request.path.${m[1]}`] = true;
      for (const q of route.query ?? []) requestParameters[`method.request.querystring.${q}`] = true;
      for (const q of route.optionalQuery ?? []) requestParameters[`method.request.querystring.${q}`] = false;
      const hasBody = route.method === 'POST' || route.method === 'PUT';
      const model = hasBody
        ? this.api.addModel(`${route.method}${route.path.replace(/[^A-Za-z0-9]/g, '')}Body`, {
            contentType: 'application/json',
            schema: {
              schema: apigw.JsonSchemaVersion.DRAFT4,
              type: apigw.JsonSchemaType.OBJECT,
              required: route.required,
            },
          })
        : undefined;
      (this.invokeSourceArns[route.fn] ??= []).push(
        this.api.arnForExecuteApi(route.method, arnPath(route.path), this.stageName),
      );
      resource.addMethod(route.method, integration(route.fn), {
        authorizationType: apigw.AuthorizationType.IAM,
        requestValidator: validator,
        requestParameters,
        requestModels: model ? { 'application/json': model } : undefined,
      });
    }

    // Unknown routes: API Gateway answers a path without a resource with 403 "Missing Authentication Token", even
    // to a signed request, and a declared resource answers a method it lacks the same way (the greedy proxy does not
    // cover it). ANY (IAM like every route) on the root, on a greedy /{proxy+} and on every resource of the route
    // tree sends them to the admin function, whose router answers 405 METHOD_NOT_ALLOWED with the Allow header on a
    // route's path and 404 ROUTE_NOT_FOUND elsewhere, in the envelope (docs/api.md). Explicit methods take
    // precedence over ANY, so the declared routes keep their functions.
    const catchAll: apigw.MethodOptions = {
      authorizationType: apigw.AuthorizationType.IAM,
      requestValidator: validator,
    };
    const tree = new Set<string>();
    for (const route of ROUTES) {
      const parts = route.path.split('/').filter(Boolean);
      parts.forEach((_, i) => tree.add('/' + parts.slice(0, i + 1).join('/')));
    }
    const catchAllResources = [
      this.api.root,
      this.api.root.addProxy({ anyMethod: false }),
      ...[...tree].map((path) => this.api.root.resourceForPath(path)),
    ];
    // One source ARN for all of them (the admin function's resource policy is limited to 20 KB): any method and
    // path of this stage.
    const adminProxy = integration('admin');
    for (const resource of catchAllResources) resource.addMethod('ANY', adminProxy, catchAll);
    this.invokeSourceArns.admin = [this.api.arnForExecuteApi('*', '/*', this.stageName)];

    // Each role: exactly the routes of its rank and below. The catch-all methods are in none of them (a signed
    // request of a role to an unknown path is 403 from API Gateway); the functions never run a route reached
    // through a catch-all resource either (lib/http/middleware.ts resolveRoute).
    for (const role of API_ROLES) {
      const allowed = ROUTES.filter((r) => roleAllows(role, r.role));
      this.roles[role].addToPolicy(
        new iam.PolicyStatement({
          sid: 'InvokeRoutes',
          actions: ['execute-api:Invoke'],
          resources: allowed.map((r) => this.api.arnForExecuteApi(r.method, arnPath(r.path), this.stageName)),
        }),
      );
    }
  }

  /** `/v1/txs` + POST -> the API Gateway metric dimension `Resource` value is the path as declared */
  static routeLabel(route: Route): string {
    return `${route.method} ${route.path}`;
  }
}
