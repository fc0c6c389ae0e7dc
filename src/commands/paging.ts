/** --limit and --offset of the service client's listings (jobs list, webhooks list, runs, events). */
import { UsageError } from '../errors.js';

export interface PagingArgs {
  limit?: number;
  offset?: number;
}

/** Checked before any request: --limit from 1 to 100 (the API's page size), --offset from 0. */
export function checkPaging(a: PagingArgs): void {
  if (a.limit !== undefined && (!Number.isInteger(a.limit) || a.limit < 1 || a.limit > 100)) throw new UsageError(`--limit: expected an integer from 1 to 100, got ${a.limit}`);
  if (a.offset !== undefined && (!Number.isInteger(a.offset) || a.offset < 0)) throw new UsageError(`--offset: expected an integer from 0, got ${a.offset}`);
}

/**
 * A listing whose --limit is optional: with it one page, without it every item from --offset on
 * (page by page). `page` is what printListing needs to say that more exist.
 */
export async function readListing<T>(
  a: PagingArgs,
  onePage: (offset: number, limit: number) => Promise<{ items: T[]; total: number }>,
  every: (offset: number) => Promise<T[]>,
): Promise<{ items: T[]; page?: { total: number; offset: number } }> {
  checkPaging(a);
  const offset = a.offset ?? 0;
  if (a.limit === undefined) return { items: await every(offset) };
  const p = await onePage(offset, a.limit);
  return { items: p.items, page: { total: p.total, offset } };
}
