/**
 * HTTPS to API Gateway with IAM auth: each request is signed with Signature Version 4 by the AWS SDK's signer
 * (@smithy/signature-v4, SHA-256 from @smithy/hash-node), with credentials from the default provider chain
 * (@aws-sdk/credential-provider-node: environment, SSO, shared config / credentials files, web identity, ECS and
 * EC2 instance roles), cached and refreshed by the chain. The chain is imported on the first signature that needs it,
 * so a client given its credentials, or a local one, does not load it.
 */
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { HttpTransport, type HttpTransportOptions, type PreparedRequest, type TransportRequest } from './transport.js';

export interface SigV4Options {
  /** e.g. eu-west-1 */
  region: string;
  /** default execute-api (API Gateway) */
  service?: string;
  /** default: the SDK's default credential chain */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /**
   * Sign the SHA-256 of the body (x-amz-content-sha256) too; default true. API Gateway accepts both; the AWS test
   * suite's vectors are computed without it.
   */
  signBodyHash?: boolean;
  /** the signing time; default now (tests pin it) */
  now?: () => Date;
}

export type SigV4TransportOptions = HttpTransportOptions & SigV4Options;

/** A SigV4 signer of prepared requests. */
export class RequestSigner {
  private readonly signer: SignatureV4;
  private readonly now: () => Date;

  constructor(options: SigV4Options) {
    this.signer = new SignatureV4({
      region: options.region,
      service: options.service ?? 'execute-api',
      credentials: options.credentials ?? defaultCredentials(),
      sha256: Hash.bind(null, 'sha256'),
      applyChecksum: options.signBodyHash ?? true,
    });
    this.now = options.now ?? (() => new Date());
  }

  /** The request with its `host`, `x-amz-date`, `authorization` (and `x-amz-security-token`) headers. */
  async sign(request: PreparedRequest): Promise<PreparedRequest> {
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of request.url.searchParams) {
      const prev = query[k];
      query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    const unsigned = new HttpRequest({
      method: request.method,
      protocol: request.url.protocol,
      hostname: request.url.hostname,
      port: request.url.port ? Number(request.url.port) : undefined,
      path: request.url.pathname,
      query,
      headers: { ...request.headers, host: request.url.host },
      body: request.body,
    });
    const signed = await this.signer.sign(unsigned, { signingDate: this.now() });
    const headers: Record<string, string> = {};
    // fetch sets Host itself (from the URL, the same value that was signed)
    for (const [k, v] of Object.entries(signed.headers)) if (k.toLowerCase() !== 'host') headers[k] = v;
    return { ...request, headers };
  }
}

/** HTTPS with SigV4 (API Gateway with AWS_IAM authorization). */
export class SigV4HttpTransport extends HttpTransport {
  private readonly signer: RequestSigner;

  constructor(options: SigV4TransportOptions) {
    super(options);
    this.signer = new RequestSigner(options);
  }

  protected override async prepare(request: TransportRequest): Promise<PreparedRequest> {
    return this.signer.sign(await super.prepare(request));
  }
}

/** The SDK's default credential chain, imported on first use. */
function defaultCredentials(): AwsCredentialIdentityProvider {
  let chain: Promise<AwsCredentialIdentityProvider> | undefined;
  return async (props) => {
    chain ??= import('@aws-sdk/credential-provider-node').then((m) => m.defaultProvider());
    return (await chain)(props);
  };
}
