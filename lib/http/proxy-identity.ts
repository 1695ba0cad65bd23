import type { APIGatewayEventIdentity } from 'aws-lambda';

/** The caller identity of an API Gateway proxy event that did not come through API Gateway (local or direct). */
export function proxyIdentity(sourceIp: string, userAgent: string | null): APIGatewayEventIdentity {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp,
    user: null,
    userAgent,
    userArn: null,
  };
}
