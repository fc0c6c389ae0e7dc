/**
 * A second connection to the same database for the explorer's reads, so a window fetch or a
 * search never waits behind a load (initial or `--follow`) running on the main connection.
 * Queries in flight are tracked: closing the connection under a running query crashes DuckDB.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { Db } from '../../store/db.js';

interface Tracking {
  pending: Set<Promise<unknown>>;
  closed: boolean;
}

const tracking = new WeakMap<Db, Tracking>();

function tracked(conn: DuckDBConnection, t: Tracking): DuckDBConnection {
  return new Proxy(conn, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      if (prop !== 'run' && prop !== 'runAndReadAll') return (v as (...a: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) => {
        if (t.closed) return Promise.reject(new Error('explorer closed'));
        const p = (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        t.pending.add(p);
        const done = () => t.pending.delete(p);
        p.then(done, done);
        return p;
      };
    },
  });
}

export async function readerFor(db: Db): Promise<Db> {
  const t: Tracking = { pending: new Set(), closed: false };
  const conn = tracked(await db.instance.connect(), t);
  // Db has no public way to wrap another connection of the same instance (its constructor is
  // private); its methods only use `this.conn`, so an object with Db's prototype is a full Db.
  const reader = Object.create(Db.prototype) as Db;
  Object.assign(reader, { instance: db.instance, conn, path: db.path });
  tracking.set(reader, t);
  return reader;
}

/** Refuse new queries, stop running ones, wait for them, then close the connection only. */
export async function closeReader(reader: Db): Promise<void> {
  const t = tracking.get(reader);
  if (t) {
    t.closed = true;
    if (t.pending.size) reader.conn.interrupt();
    await Promise.allSettled([...t.pending]);
  }
  reader.conn.closeSync();
}
