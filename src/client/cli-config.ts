/** Connection options shared by the client commands: flags first, then RUNLENS_* environment variables. */
import type { Argv } from 'yargs';
import { InputError, UsageError } from '../errors.js';
import { ApiClientError, type ClientConfig } from './http.js';

export interface ConnectionArgs {
  'base-url'?: string;
  account?: string;
  token?: string;
}

export function connectionOptions<T>(y: Argv<T>) {
  return y
    .option('base-url', { type: 'string', describe: 'service address, e.g. http://127.0.0.1:8080 (env RUNLENS_BASE_URL)' })
    .option('account', { type: 'string', describe: 'account id (env RUNLENS_ACCOUNT_ID)' })
    .option('token', { type: 'string', describe: 'API token (env RUNLENS_API_TOKEN)' });
}

export function clientConfig(a: ConnectionArgs): ClientConfig {
  const baseUrl = a['base-url'] ?? process.env.RUNLENS_BASE_URL;
  const accountId = a.account ?? process.env.RUNLENS_ACCOUNT_ID;
  const token = a.token ?? process.env.RUNLENS_API_TOKEN;
  const missing = [
    !baseUrl && '--base-url (or RUNLENS_BASE_URL)',
    !accountId && '--account (or RUNLENS_ACCOUNT_ID)',
    !token && '--token (or RUNLENS_API_TOKEN)',
  ].filter(Boolean);
  if (missing.length) throw new UsageError(`missing ${missing.join(', ')}`);
  try {
    new URL(baseUrl!);
  } catch {
    throw new UsageError(`--base-url: not a URL: ${baseUrl}`);
  }
  return { baseUrl: baseUrl!, accountId: accountId!, token: token! };
}

/** API failures become input errors (exit 2) carrying the service's own message. */
export async function withApiErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiClientError) throw new InputError(e.message);
    throw e;
  }
}
