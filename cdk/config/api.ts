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
   * IAM principals (role or user ARNs; a bare account id is refused) allowed to invoke the API functions directly with the
   * Lambda Invoke API, by caller role: each gets lambda:InvokeFunction on the functions whose every route its role
   * may call (cdk/direct-invoke.ts). Context: -c validatorInvokers=arn,arn (and blockValidationInvokers,
   * adminInvokers).
   */
  directInvokers: Record<CallerRoleName, string[]>;
  /**
   * Who may assume each caller role: aws:PrincipalArn patterns (IAM role/user ARNs of this or another account, `*`
   * allowed in the name, e.g. arn:aws:iam::123456789012:role/validator-*). The role trusts the account root only with
   * an ArnLike condition on them. Required outside stage `dev`; empty in dev means any principal of the account that
   * its own policy allows sts:AssumeRole (the dev convenience, docs/security.md). Context: -c validatorAssumers=arn,arn
   * (and blockValidationAssumers, adminAssumers).
   */
  roleAssumers: Record<CallerRoleName, string[]>;
  apiThrottleRateLimit: number;
  apiThrottleBurstLimit: number;
  /** API Gateway method throttle of each route of the status function (GET /v1/health, GET /v1/chain/tip), rps */
  statusThrottleRateLimit: number;
  statusThrottleBurstLimit: number;
}

/** Sessions of the admin role last at most this long (the other roles: ROLE_SESSION_HOURS). */
export const ADMIN_SESSION_HOURS = 1;
export const ROLE_SESSION_HOURS = 12;

export function apiDefaults(): ApiSettings {
  return {
    maxTipAdvance: 10,
    apiRestrictToRoles: true,
    directInvokers: { validator: [], blockValidation: [], admin: [] },
    roleAssumers: { validator: [], blockValidation: [], admin: [] },
    apiThrottleRateLimit: 1000,
    apiThrottleBurstLimit: 2000,
    statusThrottleRateLimit: 50,
    statusThrottleBurstLimit: 100,
  };
}

export const API_CONTEXT: ContextSpec = {
  keys: {
    maxTipAdvance: 'maxTipAdvance',
    apiRestrictToRoles: 'apiRestrictToRoles',
    validatorInvokers: 'directInvokers.validator',
    blockValidationInvokers: 'directInvokers.blockValidation',
    adminInvokers: 'directInvokers.admin',
    validatorAssumers: 'roleAssumers.validator',
    blockValidationAssumers: 'roleAssumers.blockValidation',
    adminAssumers: 'roleAssumers.admin',
    apiThrottleRateLimit: 'apiThrottleRateLimit',
    apiThrottleBurstLimit: 'apiThrottleBurstLimit',
    statusThrottleRateLimit: 'statusThrottleRateLimit',
    statusThrottleBurstLimit: 'statusThrottleBurstLimit',
  },
  listPaths: [
    'directInvokers.validator',
    'directInvokers.blockValidation',
    'directInvokers.admin',
    'roleAssumers.validator',
    'roleAssumers.blockValidation',
    'roleAssumers.admin',
  ],
};

/**
 * An IAM role or user ARN: the principals the functions' resource policies name (cdk/function-policy.ts). A bare
 * account id is refused: it would grant every principal of that account (any lambda:InvokeFunction grant there)
 * every route of the function, with no condition (security review #1).
 */
const INVOKER_PRINCIPAL = /^arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+$/;

/** An aws:PrincipalArn pattern: an IAM role or user ARN (or an account's root), `*` and `?` allowed in the name. */
const ASSUMER_PATTERN = /^arn:aws[a-z-]*:iam::\d{12}:(root|(role|user)\/[\w+=,.@/*?-]+)$/;

/** A list of IAM principal strings, each matching pattern (else the error why(p) names the setting key). */
function principalList(
  key: string,
  list: unknown,
  what: string,
  pattern: RegExp,
  why: (p: string) => string,
): unknown[] {
  if (!Array.isArray(list)) throw new ConfigurationError(key, `expected a list of IAM principal ${what}`);
  for (const p of list as unknown[])
    if (typeof p !== 'string' || !pattern.test(p)) throw new ConfigurationError(key, why(String(p)));
  return list as unknown[];
}

/**
 * What makes an assumer pattern useless or too wide (undefined: none). The role trusts only this account's root
 * (cdk/api.ts), so a pattern of another account never matches; a name made only of wildcards (`role/*`, `user/?*`)
 * matches every role or user of the account, which is the account-wide trust the setting exists to avoid.
 */
function assumerProblem(p: string, account: string | undefined): string | undefined {
  const [, patternAccount, resource] = /^arn:aws[a-z-]*:iam::(\d{12}):(.*)$/.exec(p) ?? [];
  if (account !== undefined && patternAccount !== account)
    return (
      `"${p}" names account ${patternAccount}, but the role trusts only this account (${account}): it could never ` +
      "match; name principals of this account (another account's principal reaches the API through a role here)"
    );
  const name = resource.replace(/^(role|user)\//, '');
  if (resource !== 'root' && /^[*?/]*$/.test(name))
    return `"${p}" matches every ${resource.split('/')[0]} of the account: name the principals (role/validator-*)`;
  return undefined;
}

export function validateApi(c: ApiSettings & { stage: string; account?: string }): void {
  int('maxTipAdvance', c.maxTipAdvance, 1, 0x7fffffff);
  bool('apiRestrictToRoles', c.apiRestrictToRoles);
  for (const role of CALLER_ROLES)
    principalList(`${role}Invokers`, c.directInvokers?.[role], 'ARNs', INVOKER_PRINCIPAL, (p) =>
      /^\d{12}$/.test(p)
        ? `"${p}" is a bare account id, which would let every principal of that account invoke the ` +
          'functions: name the IAM role or user ARN (arn:aws:iam::123456789012:role/name)'
        : `"${p}" is not an IAM role or user ARN (arn:aws:iam::123456789012:role/name)`,
    );
  for (const role of CALLER_ROLES) {
    const key = `${role}Assumers`;
    const list = principalList(
      key,
      c.roleAssumers?.[role],
      'ARN patterns',
      ASSUMER_PATTERN,
      (p) =>
        `"${p}" is not an IAM role or user ARN pattern (arn:aws:iam::123456789012:role/name, * allowed in the name)`,
    );
    for (const p of list as string[]) {
      const problem = assumerProblem(p, c.account);
      if (problem) throw new ConfigurationError(key, problem);
    }
    // without an explicit account the stack's account is known only at deployment: the patterns must at least agree
    const accounts = new Set((list as string[]).map((p) => p.split(':')[4]));
    if (c.account === undefined && accounts.size > 1)
      throw new ConfigurationError(
        key,
        `the patterns name ${accounts.size} accounts (${[...accounts].join(', ')}), but the role trusts only the ` +
          'account it is deployed in: all but one could never match (set -c account=... to check which)',
      );
    if (list.length === 0 && c.stage !== 'dev')
      throw new ConfigurationError(
        key,
        `required outside stage dev: the IAM principals (ARN patterns) that may assume the ${role} API role; ` +
          'without them every principal of the account allowed sts:AssumeRole could',
      );
  }
}

export function validateApiThrottles(c: ApiSettings): void {
  int('apiThrottleRateLimit', c.apiThrottleRateLimit, 1, 100000);
  int('apiThrottleBurstLimit', c.apiThrottleBurstLimit, 1, 100000);
  int('statusThrottleRateLimit', c.statusThrottleRateLimit, 1, 100000);
  int('statusThrottleBurstLimit', c.statusThrottleBurstLimit, 1, 100000);
  if (c.statusThrottleRateLimit > c.apiThrottleRateLimit)
    throw new ConfigurationError(
      'statusThrottleRateLimit',
      `${c.statusThrottleRateLimit} is above the stage's apiThrottleRateLimit ${c.apiThrottleRateLimit}: the status reads would have no throttle of their own`,
    );
}
