/** Option parsing shared by the service commands (serve, accounts, tokens, jobs); errors name the flag. */
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import type { Store } from './store/types.js';

export const DEFAULT_DATA_DIR = 'runlens-data';
export const DEFAULT_STEP_COMMANDS = ['dbt', 'runlens'];

export const dataDirOf = (data: string | undefined): string => resolve(data ?? process.env.RUNLENS_DATA ?? DEFAULT_DATA_DIR);

/** `--retry-delays 10,60,300,1800`: seconds before attempts 2..5 (fewer values: the last repeats). */
export function parseRetryDelays(text: string): number[] {
  const parts = text.split(',').map((s) => s.trim());
  if (parts.length < 1 || parts.length > 4 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) {
    throw new UsageError(`--retry-delays: expected 1 to 4 comma-separated numbers of seconds (e.g. 10,60,300,1800), got "${text}"`);
  }
  const s = parts.map(Number);
  while (s.length < 4) s.push(s[s.length - 1]!);
  return s.map((x) => x * 1000);
}

/** The longest a Node timer can wait (2^31 - 1 ms); a longer one fires after 1 ms instead. */
const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** A seconds option that feeds a timer (serve, jobs run --wait): positive, and no longer than a timer can wait. */
export function parsePositiveSeconds(flag: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new UsageError(`${flag}: expected a positive number of seconds, got ${v}`);
  if (v > MAX_TIMER_SECONDS) throw new UsageError(`${flag}: at most ${MAX_TIMER_SECONDS} seconds (about 24 days, the longest a timer can wait), got ${v}`);
  return v * 1000;
}

export function parseStepCommands(text: string): string[] {
  const names = text.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = names.find((n) => !/^[A-Za-z0-9._+-]+$/.test(n));
  if (!names.length || bad !== undefined) throw new UsageError(`--step-commands: expected comma-separated executable names (e.g. dbt,runlens), got "${text}"`);
  return names;
}

export const databaseUrlOf = (url: string | undefined): string | undefined => url || process.env.RUNLENS_DATABASE_URL || undefined;

/** The store the flags name: PostgreSQL with --database-url (or RUNLENS_DATABASE_URL), else SQLite in the data folder. */
export async function openStore(a: { data?: string; 'database-url'?: string }): Promise<Store> {
  const url = databaseUrlOf(a['database-url']);
  // The store drivers load only when a command opens a store, not for `--help`.
  if (!url) return new (await import('./store/sqlite.js')).SqliteStore(dataDirOf(a.data));
  if (!/^postgres(ql)?:\/\//.test(url)) throw new UsageError(`--database-url: expected postgres://user@host:port/database, got "${url}"`);
  try {
    return await (await import('./store/postgres.js')).PostgresStore.connect(url);
  } catch (e) {
    throw new UsageError(`--database-url: cannot use ${redact(url)}: ${(e as Error).message}`);
  }
}

/** A connection URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
