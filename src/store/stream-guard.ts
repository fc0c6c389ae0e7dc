/**
 * A streaming result that ends early says so. DuckDB's streaming result ends with an empty chunk both
 * at its end and when its statement fails after the first rows (the node API does not hand that error
 * over), so a reader would take the rows so far for the whole result. In a transaction of its own the
 * failure still shows afterwards: the transaction is aborted.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { errorMessage } from '../errors.js';

export interface StreamGuard {
  /** After the last chunk: whether the statement ran to its end. Ends the guard's transaction. */
  whole(): Promise<boolean>;
  /** Ends the guard's transaction (a stream left before its end, or one that failed at its start). */
  release(): Promise<void>;
  /** Begins the guard's transaction again, after a statement that failed before any stream began. */
  restart(): Promise<void>;
}

export async function guardStream(conn: DuckDBConnection): Promise<StreamGuard> {
  // On a connection already in a transaction, that one is aborted all the same.
  let own = await conn.run('BEGIN TRANSACTION').then(() => true, () => false);
  const end = async (sql: string) => {
    if (!own) return;
    own = false;
    await conn.run(sql);
  };
  return {
    async whole() {
      let whole = true;
      try {
        await conn.run('SELECT 1');
      } catch (e) {
        if (!/transaction is aborted/i.test(errorMessage(e))) throw e;
        whole = false;
      }
      await end(whole ? 'COMMIT' : 'ROLLBACK');
      return whole;
    },
    release: () => end('ROLLBACK').catch(() => undefined),
    async restart() {
      if (!own) return;
      await conn.run('ROLLBACK');
      await conn.run('BEGIN TRANSACTION');
    },
  };
}

/**
 * The error of a statement whose stream ended early: the statement run again without handing its
 * rows over (a hash of each row computes every column), which throws DuckDB's own message.
 */
export async function errorOfCutStream(conn: DuckDBConnection, sql: string, params?: Parameters<DuckDBConnection['run']>[1]): Promise<Error> {
  try {
    await conn.run(`SELECT count(hash(_q)) FROM (${sql}) _q`, params);
  } catch (e) {
    return e instanceof Error ? e : new Error(errorMessage(e));
  }
  return new Error('the statement stopped before its end, and DuckDB did not say why');
}
