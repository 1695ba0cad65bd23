/**
 * The caller roles of the functions' tests (API_CALLER_ROLES as the CDK sets it) and a request signed by one of them
 * through API Gateway (the signer's ARN in the request context, as IAM authorization leaves it).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { apiEvent, captureStdout, gatewayContext, type ApiEventOptions } from './events';

export type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export const ROLES =
  'validator=Stage-ApiValidatorRole-AAA,blockValidation=Stage-ApiBlockValidationRole-BBB,admin=Stage-ApiAdminRole-CCC';
export const signer = (roleName: string) => `arn:aws:sts::123456789012:assumed-role/${roleName}/session-1`;
export const VALIDATOR = signer('Stage-ApiValidatorRole-AAA');
export const BLOCK_VALIDATION = signer('Stage-ApiBlockValidationRole-BBB');
export const ADMIN = signer('Stage-ApiAdminRole-CCC');

/** The Lambda environment with `roles` as API_CALLER_ROLES (undefined: none configured). */
export function inLambda(roles: string | undefined): void {
  process.env.AWS_LAMBDA_FUNCTION_NAME = 'bsv-utxo-store-test';
  if (roles === undefined) delete process.env.API_CALLER_ROLES;
  else process.env.API_CALLER_ROLES = roles;
}

/** Puts API_CALLER_ROLES and AWS_LAMBDA_FUNCTION_NAME back as they are now, in `hook` (after all tests by default). */
export function restoresCallerEnv(hook: (fn: () => void) => void = afterAll): void {
  const saved = { roles: process.env.API_CALLER_ROLES, fn: process.env.AWS_LAMBDA_FUNCTION_NAME };
  hook(() => {
    for (const [k, v] of [
      ['API_CALLER_ROLES', saved.roles],
      ['AWS_LAMBDA_FUNCTION_NAME', saved.fn],
    ] as const)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  });
}

/** Runs in "Lambda" with ROLES configured before each test (`hook`), restoring the environment after all. */
export function useCallerRoles(hook: (fn: () => void) => void = beforeEach): void {
  restoresCallerEnv();
  hook(() => inLambda(ROLES));
}

/** The handler's answer to a request signed by `userArn` through API Gateway (the gateway alias), its body parsed. */
export async function callAs(handler: Handler, options: ApiEventOptions, userArn: string) {
  const event = apiEvent(options);
  event.requestContext.identity.userArn = userArn;
  const { result } = await captureStdout(() => handler(event, gatewayContext()));
  return { ...result, json: result.body ? JSON.parse(result.body) : undefined };
}
