/**
 * API authentication: `Authorization: Token <t>` or `Bearer <t>`, tokens stored as SHA-256 hashes and
 * scoped to one account. Another account's resources answer 404 (as if absent), never 403.
 */
import type { FastifyRequest } from 'fastify';
import { hashToken } from '../ids.js';
import type { Store, TokenRecord } from '../store/types.js';
import { ApiError, notFound } from './envelope.js';

export const PERMISSION_SETS = [
  'owner', 'account_admin', 'admin', 'developer', 'analyst', 'stakeholder', 'job_admin', 'job_runner', 'job_viewer',
  'read_only', 'member', 'account_viewer', 'billing_admin', 'security_admin', 'git_admin', 'database_admin', 'team_admin',
  'project_creator', 'metadata_only', 'semantic_layer_only', 'webhooks_only',
] as const;

/**
 * Who may write what: the one list behind the API's 403s, `runlens tokens --help` and docs/service.md
 * (a test holds the docs to it). Webhooks follow interface section 1 (Account Admin, Admin or
 * Developer), plus the owner and the webhooks-only set; jobs and runs the hosted job permissions.
 * Any token of the account may read.
 */
const JOB_ADMINS = ['owner', 'account_admin', 'admin', 'developer', 'job_admin'] as const;
export const WRITE_ACCESS = {
  webhooks: { what: 'create, update, delete and test webhook subscriptions', sets: ['owner', 'account_admin', 'admin', 'developer', 'webhooks_only'] },
  jobs: { what: 'create and delete jobs', sets: JOB_ADMINS },
  runs: { what: 'trigger runs', sets: [...JOB_ADMINS, 'job_runner'] },
} as const;
export const WEBHOOK_WRITERS: readonly string[] = WRITE_ACCESS.webhooks.sets;
export const JOB_WRITERS: readonly string[] = WRITE_ACCESS.jobs.sets;
export const RUN_TRIGGERS: readonly string[] = WRITE_ACCESS.runs.sets;

/** One line for help texts: "create jobs: owner, ...; trigger runs: ...". */
export const writeAccessSummary = (): string =>
  `${Object.values(WRITE_ACCESS).map((w) => `${w.what}: ${w.sets.join(', ')}`).join('; ')}; any token reads`;

async function authenticate(store: Store, req: FastifyRequest, accountIdParam: string): Promise<TokenRecord> {
  const header = req.headers.authorization;
  const m = typeof header === 'string' ? /^(Token|Bearer)\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw new ApiError(401, 'Authentication credentials were not provided.', 'send Authorization: Token <api token> (or Bearer <api token>)');
  const token = await store.findToken(hashToken(m[2]!));
  if (!token) throw new ApiError(401, 'Invalid token.', 'the API token is unknown');
  if (accountIdParam !== String(token.accountId)) throw notFound('account'); // canonical ids only: 01 is not 1
  return token;
}

const tokens = new WeakMap<FastifyRequest, TokenRecord>();

/**
 * onRequest hook: every route under an account authenticates before its body is read, so a request
 * without valid credentials is 401 whatever its body holds.
 */
export const authenticateRequest = (store: Store) => async (req: FastifyRequest): Promise<void> => {
  const account = (req.params as { account_id?: string } | undefined)?.account_id;
  if (account !== undefined) tokens.set(req, await authenticate(store, req, account));
};

/** The token the request was authenticated with (by the hook above). */
export function tokenOf(req: FastifyRequest): TokenRecord {
  const t = tokens.get(req);
  if (!t) throw new Error(`${req.method} ${req.routeOptions.url}: route without an account to authenticate against`);
  return t;
}

export function requirePermission(token: TokenRecord, allowed: readonly string[], action: string): void {
  if (!allowed.includes(token.permissionSet)) {
    throw new ApiError(403, 'You do not have permission to perform this action.',
      `${action} needs one of the permission sets ${allowed.join(', ')}; this token has ${token.permissionSet}`);
  }
}
