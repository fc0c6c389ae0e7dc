import type { DuckDBConnection } from '@duckdb/node-api';
import type { Db } from './db.js';
import { timed } from './timing.js';

/**
 * The INSERT of a Parquet file's attributes into record_attributes (src/store/attributes-join.ts),
 * on a connection of its own and in its own transaction, while the main connection inserts the
 * file's rows: a file with one row group is read on one thread, and this puts the other core to
 * work rather than building the JSON in the main insert.
 */
export class AttributesWriter {
  committed = false;
  private settled = false;
  private rolledBack = false;
  private constructor(
    private readonly conn: DuckDBConnection,
    private readonly insert: Promise<void>,
  ) {
    // Handled here so that a failure is not unhandled while the main insert runs; written() rethrows it.
    insert.then(
      () => (this.settled = true),
      () => (this.settled = true),
    );
  }

  static async start(db: Db, select: string, fileId: number): Promise<AttributesWriter> {
    // Attributes of a file whose records were never committed (a process that died in between).
    await db.run('DELETE FROM record_attributes WHERE file_id NOT IN (SELECT file_id FROM files)');
    const conn = await db.instance.connect();
    const insert = (async () => {
      await conn.run('BEGIN TRANSACTION');
      await timed('insert attributes', () => conn.run(`INSERT INTO record_attributes ${select}`, { file_id: fileId }));
    })();
    return new AttributesWriter(conn, insert);
  }

  written(): Promise<void> {
    return this.insert;
  }

  /** Called before the records' commit: the caller removes the attributes if that commit fails. */
  async commit(): Promise<void> {
    await this.insert;
    await this.conn.run('COMMIT');
    this.committed = true;
  }

  async rollback(): Promise<void> {
    if (this.committed || this.rolledBack) return;
    this.rolledBack = true;
    if (!this.settled) this.conn.interrupt();
    await this.insert.catch(() => undefined);
    await this.conn.run('ROLLBACK').catch(() => undefined);
  }

  close(): void {
    this.conn.closeSync();
  }
}
