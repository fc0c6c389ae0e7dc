/**
 * Options of the administration commands (accounts, tokens). They work on serve's store directly,
 * not over HTTP: the API's tokens are scoped to one account, so accounts and the tokens themselves
 * are made where the data is. They work while serve runs.
 */
import type { Argv } from 'yargs';
import { existsSync } from 'node:fs';
import { dataDirOf, databaseUrlOf, openStore } from '../service/cli-options.js';
import { sqliteFileIn } from '../service/store/sqlite-file.js';
import type { Store } from '../service/store/types.js';
import { formatOption, type ClientFormat } from '../client/output.js';
import { UsageError } from '../errors.js';

export interface StoreArgs {
  data?: string;
  'database-url'?: string;
  format: ClientFormat;
}

export const STORE_MODEL = "works on serve's data folder (--data) or database (--database-url) directly, not over HTTP; safe while serve runs";

export function storeOptions<T>(y: Argv<T>) {
  return y
    .option('data', { type: 'string', describe: 'the data folder serve uses; default $RUNLENS_DATA or ./runlens-data' })
    .option('database-url', { type: 'string', describe: 'PostgreSQL store serve uses (env RUNLENS_DATABASE_URL); instead of --data' })
    .option('format', { ...formatOption, describe: 'json: for scripts' });
}

/** Where the store is, for messages. */
export const storeName = (a: StoreArgs): string => (databaseUrlOf(a['database-url']) ? 'the database' : dataDirOf(a.data));

/**
 * Runs `fn` on the store. Opening SQLite creates it, so only a command that makes something from
 * nothing (`accounts create`) passes `create`: a listing on a mistyped --data must not leave an
 * empty store there and answer "(none)". (PostgreSQL is not created by opening: a mistyped URL names no database.)
 */
export async function withStore<T>(a: StoreArgs, fn: (store: Store) => Promise<T>, o: { create?: boolean } = {}): Promise<T> {
  if (!o.create && !databaseUrlOf(a['database-url'])) {
    const dir = dataDirOf(a.data);
    const file = sqliteFileIn(dir);
    if (!existsSync(file)) {
      throw new UsageError(`${dir} holds no service data (expected ${file}): give the --data folder serve uses, or start with \`runlens accounts create NAME --data ${dir}\``);
    }
  }
  const store = await openStore(a);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export const isoMicros = (us: number): string => new Date(Math.floor(us / 1000)).toISOString();
