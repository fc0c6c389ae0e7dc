/**
 * Opening a model. Reading never writes (DESIGN.md): `load` and `receive` (and the commands that
 * receive, `--receive`) open a --db model to write it, creating it if needed; every other command
 * opens an existing runlens model read-only. A reading command that also takes PATHs, or a model
 * of another runlens version (which would need rewriting), reads from an in-memory copy instead.
 */
import { existsSync } from 'node:fs';
import { InputError, UsageError } from '../errors.js';
import { Db, sqlString } from './db.js';
import { shellWords } from '../render/shell-words.js';
import { ensureSchema, modelState, readUnderEarlierRules, unfinishedLoads, type ModelState } from './schema.js';

const MAKES_MODELS = '`runlens load PATH --db FILE` makes models';

function refuse(state: ModelState, path: string, reading: boolean): void {
  // what a first load leaves when it stops before it made the model's tables
  if (reading && state === 'empty') {
    throw new InputError(`not a runlens model (an empty DuckDB database: a load into it may have stopped before it began; ${MAKES_MODELS})`, path);
  }
  if (state === 'not-a-model') {
    throw new InputError(`not a runlens model (a DuckDB database without runlens's tables; ${MAKES_MODELS})`, path);
  }
  if (state === 'newer') throw new InputError('the model was made by a newer runlens; upgrade runlens to read it', path);
  if (reading && state === 'unfinished') {
    throw new InputError(`the model was not finished: the load that made it stopped before it had made its tables (\`runlens load PATH --db ${path}\` finishes it)`, path);
  }
}

/** Loads into the model that did not complete (but `except`), said with the commands that run them again. */
async function unfinishedLoadsError(db: Db, path: string, except?: string): Promise<InputError | undefined> {
  const loads = (await unfinishedLoads(db)).filter((l) => l !== except);
  if (loads.length === 0) return undefined;
  const again = loads.map((l) => `\`runlens ${l} --db ${shellWords([path])}\``).join(', ');
  // only that load completing clears its mark: one that never can leaves the model to be made anew
  const anew = (it: string) => `; if ${it} cannot complete (a file it was given is damaged), make the model again: remove ${path} and load what it should hold`;
  if (loads.length === 1) {
    return new InputError(`a load into the model did not finish (${loads[0]}): it may lack files that load was given; run the load again (${again})${anew('it')}`, path);
  }
  return new InputError(`${loads.length} loads into the model did not finish (${loads.join('; ')}): it may lack files those loads were given; run each again (${again})${anew('one')}`, path);
}

/** Say so when the model's records were read by an earlier runlens, whose answers may differ from a load today. */
async function warnOfEarlierRules(db: Db, path: string): Promise<void> {
  if (!(await readUnderEarlierRules(db))) return;
  process.stderr.write(
    `runlens: warning: ${path}: its records were loaded by an earlier runlens, which read some telemetry otherwise than this one ` +
      `(which of two copies of a span wins, what a load refuses, how the older engine's files translate); they are kept as read then, ` +
      `so answers may differ from a load of the same files today: to be sure, load its files into a new model\n`,
  );
}

/**
 * Open (or create) a model to write: in memory, or the --db FILE of `load` and `receive`. `load`: the
 * command line of the load about to run (a new model is made with its mark). `unfinished`, for a model
 * a load into which did not complete: `refuse` it as readers do (a command that judges or shows the
 * model), or `warn` and go on (one that only adds to it, as a load does: its own earlier mark, which
 * it is about to clear, is not said).
 */
export async function openModel(dbPath?: string, opts: { load?: string; unfinished?: 'refuse' | 'warn' } = {}): Promise<Db> {
  // DuckDB's name for an in-memory database: a "saved" model that is gone when the command ends
  if (dbPath?.startsWith(':memory:')) throw new UsageError(`--db takes a file path, not ${dbPath} (without --db the model lives in memory)`);
  const db = await Db.open(dbPath);
  try {
    const state = dbPath === undefined ? 'empty' : await modelState(db);
    if (dbPath !== undefined) refuse(state, dbPath, false);
    if (dbPath !== undefined && state === 'load-unfinished' && opts.unfinished) {
      const e = await unfinishedLoadsError(db, dbPath, opts.unfinished === 'warn' ? opts.load : undefined);
      if (e && opts.unfinished === 'refuse') throw e;
      if (e) process.stderr.write(`runlens: warning: ${e.message}\n`);
    }
    const fresh = state === 'empty';
    if (dbPath !== undefined && !fresh && state !== 'unfinished') await warnOfEarlierRules(db, dbPath);
    await ensureSchema(db, { fresh, load: opts.load });
    if (fresh && dbPath !== undefined) db.madeForLoad = opts.load;
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * Open an existing runlens model to read. `copy`: PATHs will be loaded beside it, into an in-memory
 * copy (the file is not changed).
 */
export async function openModelToRead(dbPath: string, opts: { copy?: boolean } = {}): Promise<Db> {
  if (!existsSync(dbPath)) throw new InputError(`no such model (${MAKES_MODELS})`, dbPath);
  const db = await Db.open(dbPath, { readOnly: true });
  let state: ModelState;
  try {
    state = await modelState(db);
    refuse(state, dbPath, true);
    const unfinished = state === 'load-unfinished' ? await unfinishedLoadsError(db, dbPath) : undefined;
    if (unfinished) throw unfinished;
    await warnOfEarlierRules(db, dbPath);
  } catch (e) {
    db.close();
    throw e;
  }
  if (state === 'current' && !opts.copy) return db;
  db.close();
  return copyIntoMemory(dbPath);
}

/**
 * The model's tables copied into a new in-memory database and brought up to this runlens's schema
 * there. Rows keep their order, so a record's line (its row id less its file's first row id) stays
 * right once each file's first row id is taken again.
 */
async function copyIntoMemory(dbPath: string): Promise<Db> {
  const db = await Db.open();
  try {
    await db.run(`ATTACH ${sqlString(dbPath)} AS _model (READ_ONLY)`);
    const tables = await db.all<{ name: string }>(
      `SELECT table_name AS name FROM duckdb_tables() WHERE database_name = '_model' AND schema_name = 'main' AND table_name <> 'runlens_meta'`,
    );
    for (const { name } of tables) await db.run(`CREATE TABLE main."${name}" AS SELECT * FROM _model.main."${name}"`);
    const madeBy = await db.scalar<string | null>(`SELECT max(value) FROM _model.main.runlens_meta WHERE key = 'ddl'`);
    await db.run('DETACH _model');
    await ensureSchema(db, { migrate: true, madeBy });
    await db.run(`UPDATE files SET first_row = f.first FROM (SELECT file_id, min(rowid) AS first FROM record_rows GROUP BY file_id) f
                  WHERE files.file_id = f.file_id`);
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * The model a command works on: `writes` for load and receive; otherwise read (`adding`: PATHs go
 * into it too). `shows`: a writing command that also judges or shows the model (gate and explore
 * --receive) refuses one a load into which did not complete, as readers do. `load`: see openModel.
 */
export async function openModelFor(o: { db?: string; writes: boolean; adding: boolean; shows?: boolean; load?: string }): Promise<Db> {
  if (o.writes || o.db === undefined) return openModel(o.db, { load: o.load, unfinished: o.shows ? 'refuse' : 'warn' });
  return openModelToRead(o.db, { copy: o.adding });
}
