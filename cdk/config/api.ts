/** Configuration area: the API, its callers (the three roles, direct invokers) and the tip bound it enforces. */
import { bool, ConfigurationError, int, type ContextSpec } from './errors';

/** The caller roles of the API, lowest rank first (docs/api.md). */
export const CALLER_ROLES = ['validator', 'blockValidation', 'admin'] as const;
export type CallerRoleName = (typeof CALLER_ROLES)[number];

export interface ApiSettings {
  /** blocks PUT /v1/chain/tip may move the tip forward per call (MAX_TIP_ADVANCE); more needs the admin route */
  maxTipAdvance: number;
  /** Deny every caller but the three API roles in the API's resource policy (aws:PrincipalArn) */
  apiRestrictToRoles: boolean;
  /**
   * IAM principals (role/user ARNs or 12-digit account ids) allowed to invoke the API functions directly with the
   * Lambda Invoke API, by caller role: each gets lambda:InvokeFunction on the functions whose every route its role
   * may call (cdk/direct-invoke.ts). Context: -c validatorInvokers=arn,arn (and blockValidationInvokers,
   * adminInvokers).
   */
  directInvokers: Record<CallerRoleName, string[]>;
  apiThrottleRateLimit: number;
  apiThrottleBurstLimit: number;
}

export function apiDefaults(): ApiSettings {
  return {
    maxTipAdvance: 10,
    apiRestrictToRoles: true,
    directInvokers: { validator: [], blockValidation: [], admin: [] },
    apiThrottleRateLimit: 1000,
    apiThrottleBurstLimit: 2000,
  };
}

export const API_CONTEXT: ContextSpec = {
  keys: {
    maxTipAdvance: 'maxTipAdvance',
    apiRestrictToRoles: 'apiRestrictToRoles',
    validatorInvokers: 'directInvokers.validator',
    blockValidationInvokers: 'directInvokers.blockValidation',
    adminInvokers: 'directInvokers.admin',
    apiThrottleRateLimit: 'apiThrottleRateLimit',
    apiThrottleBurstLimit: 'apiThrottleBurstLimit',
  },
  listPaths: ['directInvokers.validator', 'directInvokers.blockValidation', 'directInvokers.admin'],
};

/** An IAM role or user ARN, or an account id: the principals a Lambda resource policy can name. */
const INVOKER_PRINCIPAL = /^(\d{12}|arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+)$/;

export function validateApi(c: ApiSettings): void {
  int('maxTipAdvance', c.maxTipAdvance, 1, 0x7fffffff);
  bool('apiRestrictToRoles', c.apiRestrictToRoles);
  for (const role of CALLER_ROLES) {
    const list = c.directInvokers?.[role];
    const key = `${role}Invokers`;
    if (!Array.isArray(list)) throw new ConfigurationError(key, 'expected a list of IAM principal ARNs');
    for (const p of list)
      if (typeof p !== 'string' || !INVOKER_PRINCIPAL.test(p))
        throw new ConfigurationError(
          key,
          `"${String(p)}" is not an IAM role or user ARN (arn:aws:iam::123456789012:role/name) or a 12-digit account id`,
        );
  }
}

export function validateApiThrottles(c: ApiSettings): void {
  int('apiThrottleRateLimit', c.apiThrottleRateLimit, 1, 100000);
  int('apiThrottleBurstLimit', c.apiThrottleBurstLimit, 1, 100000);
}
