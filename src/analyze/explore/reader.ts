/**
 * A second connection to the same database for the explorer's reads, so a window fetch or a
 * search never waits behind a load (initial or `--follow`) running on the main connection.
 */
import { Db } from '../../store/db.js';

export async function readerFor(db: Db): Promise<Db> {
  const conn = await db.instance.connect();
  // Db has no public way to wrap another connection of the same instance (its constructor is
  // private); its methods only use `this.conn`, so an object with Db's prototype is a full Db.
  const reader = Object.create(Db.prototype) as Db;
  Object.assign(reader, { instance: db.instance, conn, path: db.path });
  return reader;
}

/** Close the reader's connection only (the instance belongs to the main Db). */
export function closeReader(reader: Db): void {
  reader.conn.closeSync();
}
