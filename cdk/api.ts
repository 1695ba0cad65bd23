/**
 * The REST API of DESIGN section 10: IAM (SigV4) authorization on every method, request validation (body and
 * parameters), JSON access logs, stage throttling, one Lambda proxy integration per route.
 */
import { Aws, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionName, UtxoStoreConfig } from './config';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Route {
  method: HttpMethod;
  /** resource path, `{param}` for path parameters */
  path: string;
  fn: FunctionName;
  /** required top-level JSON body properties (POST/PUT) */
  required?: string[];
  /** required query string parameters */
  query?: string[];
  /** optional query string parameters */
  optionalQuery?: string[];
}

/** DESIGN section 10, route by route. */
export const ROUTES: Route[] = [
  { method: 'POST', path: '/v1/txs', fn: 'create', required: ['tx'] },
  { method: 'GET', path: '/v1/txs/{txid}', fn: 'get', optionalQuery: ['fields'] },
  { method: 'DELETE', path: '/v1/txs/{txid}', fn: 'admin' },
  { method: 'POST', path: '/v1/spends', fn: 'spend' },
  { method: 'POST', path: '/v1/unspends', fn: 'unspend', required: ['spends'] },
  { method: 'POST', path: '/v1/mined', fn: 'setMined', required: ['txids', 'blockId', 'blockHeight', 'subtreeIdx'] },
  { method: 'POST', path: '/v1/locked', fn: 'admin', required: ['txids', 'locked'] },
  { method: 'POST', path: '/v1/conflicting', fn: 'admin', required: ['txids', 'conflicting'] },
  { method: 'POST', path: '/v1/freeze', fn: 'admin', required: ['utxos'] },
  { method: 'POST', path: '/v1/unfreeze', fn: 'admin', required: ['utxos'] },
  { method: 'POST', path: '/v1/reassign', fn: 'admin', required: ['txid', 'vout', 'utxoHash', 'newUtxoHash'] },
  { method: 'POST', path: '/v1/preserve', fn: 'admin', required: ['txids', 'untilHeight'] },
  { method: 'GET', path: '/v1/utxos/{txid}/{vout}', fn: 'getUtxo', optionalQuery: ['utxoHash'] },
  { method: 'GET', path: '/v1/unmined', fn: 'admin', query: ['cutoff'], optionalQuery: ['limit', 'cursor'] },
  { method: 'GET', path: '/v1/chain/tip', fn: 'admin' },
  { method: 'PUT', path: '/v1/chain/tip', fn: 'admin', required: ['height'] },
  { method: 'POST', path: '/v1/batch/txs', fn: 'create', required: ['txs'] },
  { method: 'POST', path: '/v1/batch/spends', fn: 'spend', required: ['txs'] },
  { method: 'POST', path: '/v1/batch/get', fn: 'get', required: ['txids'] },
  { method: 'POST', path: '/v1/batch/outputs', fn: 'get', required: ['outpoints'] },
  { method: 'POST', path: '/v1/batch/utxos', fn: 'getUtxo', required: ['utxos'] },
  { method: 'POST', path: '/v1/cleanup', fn: 'admin' },
  { method: 'GET', path: '/v1/health', fn: 'admin' },
];

export interface ApiProps {
  config: UtxoStoreConfig;
  targets: Record<FunctionName, lambda.IFunction>;
}

const ERROR_TEMPLATE = (code: string, message: string): Record<string, string> => ({
  'application/json': `{"error":{"code":"${code}","message":${message}}}`,
});

export class Api extends Construct {
  readonly api: apigw.RestApi;
  readonly accessLogs: logs.LogGroup;
  readonly stageName: string;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    const { config } = props;
    this.stageName = config.stage;

    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    this.api = new apigw.RestApi(this, 'Api', {
      restApiName: `bsv-utxo-store-${config.stage}`,
      description: 'bsv-utxo-store HTTP API v1 (DESIGN section 10); SigV4 (IAM) authorization',
      endpointTypes: [apigw.EndpointType.REGIONAL],
      // execution logging (below) needs the account-level CloudWatch role
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      defaultMethodOptions: { authorizationType: apigw.AuthorizationType.IAM },
      deployOptions: {
        stageName: config.stage,
        accessLogDestination: new apigw.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: apigw.AccessLogFormat.jsonWithStandardFields({
          caller: true,
          httpMethod: true,
          ip: true,
          protocol: true,
          requestTime: true,
          resourcePath: true,
          responseLength: true,
          status: true,
          user: true,
        }),
        throttlingRateLimit: config.apiThrottleRateLimit,
        throttlingBurstLimit: config.apiThrottleBurstLimit,
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        // per-method metrics: the dashboard's requests and errors by route
        metricsEnabled: true,
        tracingEnabled: config.xrayTracing,
      },
    });

    // API Gateway's own 4xx answers in the API's error format (DESIGN section 10)
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

    const integrations = new Map<FunctionName, apigw.LambdaIntegration>();
    const integration = (fn: FunctionName): apigw.LambdaIntegration => {
      let i = integrations.get(fn);
      if (!i) {
        i = new apigw.LambdaIntegration(props.targets[fn], { proxy: true, allowTestInvoke: false });
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
    // route's path and 404 ROUTE_NOT_FOUND elsewhere, in the envelope (DESIGN section 10). Explicit methods take
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
    // One invoke permission for all of them: LambdaIntegration adds a statement per method, and the function's
    // resource policy is limited to 20 KB.
    const admin = props.targets.admin;
    const adminProxy = new apigw.Integration({
      type: apigw.IntegrationType.AWS_PROXY,
      integrationHttpMethod: 'POST',
      uri: `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}:lambda:path/2015-03-31/functions/${admin.functionArn}/invocations`,
    });
    for (const resource of catchAllResources) resource.addMethod('ANY', adminProxy, catchAll);
    admin.addPermission('ApiCatchAllPermission', {
      principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: this.api.arnForExecuteApi('*', '/*', this.api.deploymentStage.stageName),
    });
  }

  /** `/v1/txs` + POST -> the API Gateway metric dimension `Resource` value is the path as declared */
  static routeLabel(route: Route): string {
    return `${route.method} ${route.path}`;
  }
}
