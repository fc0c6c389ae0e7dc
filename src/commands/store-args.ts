/**
 * Options of the administration commands (accounts, tokens). They work on serve's store directly,
 * not over HTTP: the API's tokens are scoped to one account, so accounts and the tokens themselves
 * are made where the data is. They work while serve runs.
 */
import type { Argv } from 'yargs';
import { dataDirOf, databaseUrlOf, openStore } from '../service/cli-options.js';
import type { Store } from '../service/store/types.js';
import { formatOption, type ClientFormat } from '../client/output.js';

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

export async function withStore<T>(a: StoreArgs, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(a);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export const isoMicros = (us: number): string => new Date(Math.floor(us / 1000)).toISOString();
