/**
 * Small JSONL files read by one statement. A folder of many runs' files would otherwise pay, for every
 * file, the planning of the insert statement, which takes longer than reading a small file. The rows
 * of a batch, normalized as a file's own insert makes them, wait in a temporary table; loadFile then
 * copies one file's rows into record_rows in that file's transaction, so that everything after the
 * read (content hash, records already present, the file's commit, its refusal) is as for a file read
 * alone. A file whose rows the read's checks refused or whose bytes scanBeside flags, and every file
 * of a batch DuckDB could not read, is read alone, where its fault is found and told as ever.
 */
import { errorMessage } from '../errors.js';
import type { InputFile } from '../ingest/detect.js';
import { readJsonSql } from '../ingest/jsonl.js';
import { scanBeside } from '../ingest/jsonl-lines.js';
import type { Db } from './db.js';
import { duckdbPath } from './file-path-sql.js';
import { normalizeSelect } from './normalize-sql.js';
import { timed } from './timing.js';

/** Files up to this size are read in batches; a bigger file's insert costs more than its planning. */
const STAGED_FILE_BYTES = 4 << 20;
const BATCH_BYTES = 64 << 20;
const BATCH_FILES = 256;

const stageable = (input: InputFile): boolean =>
  input.format === 'jsonl' && !input.gzip && !input.shownAs && input.size > 0 && input.size <= STAGED_FILE_BYTES;

/** The batches of a load: which files wait in the temporary table `_staged`, under which file_id there. */
export class StagedJsonl {
  /** files of the current batch that are clean -> their file_id in _staged */
  private clean = new Map<InputFile, number>();
  /** files a batch has been tried for (staged or not): never staged twice */
  private tried = new Set<InputFile>();

  /** Stage the batch that starts at inputs[from] unless that file was tried; returns whether inputs[from] waits in _staged. */
  async ready(db: Db, inputs: readonly InputFile[], from: number): Promise<boolean> {
    const first = inputs[from]!;
    if (!stageable(first)) return false;
    if (!this.tried.has(first)) await this.stage(db, inputs, from);
    return this.clean.has(first);
  }

  private async stage(db: Db, inputs: readonly InputFile[], from: number): Promise<void> {
    const batch: InputFile[] = [];
    // each file's rows are told by the path DuckDB was given, which two paths of one file may share (duckdbPath)
    const given = new Set<string>();
    let bytes = 0;
    for (const input of inputs.slice(from)) {
      if (!stageable(input) || input.keyStyle !== inputs[from]!.keyStyle || batch.length === BATCH_FILES || bytes + input.size > BATCH_BYTES) break;
      if (given.has(duckdbPath(input.path))) break;
      given.add(duckdbPath(input.path));
      batch.push(input);
      bytes += input.size;
    }
    this.clean = new Map();
    for (const input of batch) this.tried.add(input);
    if (batch.length < 2) return;
    // what DuckDB's reader forgives (a trailing comma, blank lines; a byte order mark in a file after
    // the first), looked for beside the read, a file at a time
    const scans = (async () => {
      const flagged: boolean[] = [];
      for (const input of batch) {
        const s = await scanBeside(input.path, false);
        flagged.push(s.trailingComma || s.blankLines || s.notJsonSpace || s.byteOrderMark);
      }
      return flagged;
    })();
    scans.catch(() => undefined);
    try {
      await timed('stage records', () =>
        db.run(`CREATE OR REPLACE TEMP TABLE _staged AS ${normalizeSelect(readJsonSql(batch[0]!, { files: batch.map((f) => f.path), checks: true }))}`));
    } catch (e) {
      if (/INTERRUPT/i.test(errorMessage(e))) throw e;
      await db.run('DROP TABLE IF EXISTS _staged');
      return;
    }
    const flagged = await scans.catch(() => batch.map(() => true));
    const refused = new Set((await db.all<{ i: number }>('SELECT DISTINCT file_id AS i FROM _staged WHERE record_type IS NULL')).map((r) => r.i));
    for (const [i, input] of batch.entries()) if (!flagged[i] && !refused.has(i)) this.clean.set(input, i);
  }

  /** A staged file's rows into record_rows as file `fileId`, in the open transaction. */
  async copy(db: Db, input: InputFile, fileId: number): Promise<void> {
    await timed('insert records', () =>
      db.run('INSERT INTO record_rows SELECT * REPLACE (CAST($file_id AS INTEGER) AS file_id) FROM _staged WHERE file_id = $staged', {
        file_id: fileId,
        staged: this.clean.get(input)!,
      }));
  }

  async drop(db: Db): Promise<void> {
    this.clean = new Map();
    await db.run('DROP TABLE IF EXISTS _staged');
  }
}
