/**
 * A user's file path as DuckDB's file readers take it. DuckDB expands `*`, `?` and `[...]` in a
 * path as a glob (with no escape for them), a leading `~` as the home folder, and `scheme://` as a
 * remote file: given such a path, it would read other files, or none. Such a path is handed over as
 * a symbolic link with a plain name in a private temporary folder (removed when the process exits);
 * messages DuckDB writes about the link are told with the user's path (userPathsIn).
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sqlString } from './sql-text.js';

/** What DuckDB would read as something other than the one local file the path names. */
const NOT_PLAIN = /[*?[\]]|^~|:\/\//;

let folder: string | undefined;
/** user path (resolved) -> link */
const links = new Map<string, string>();
/** link -> user path as given */
const shown = new Map<string, string>();

/** The path DuckDB is to be given for `file`: itself, or a link to it with a plain name. */
export function duckdbPath(file: string): string {
  if (!NOT_PLAIN.test(file)) return file;
  const target = path.resolve(file);
  let link = links.get(target);
  if (link === undefined) {
    if (folder === undefined) {
      const made = mkdtempSync(path.join(tmpdir(), 'runlens-paths-'));
      folder = made;
      process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    }
    // (the extension kept: DuckDB may go by it, e.g. to tell gzip)
    const ext = /(\.[A-Za-z0-9]+)*$/.exec(path.basename(file))![0];
    link = path.join(folder, `file${links.size}${ext}`);
    symlinkSync(target, link);
    links.set(target, link);
    shown.set(link, file);
  }
  return link;
}

/** `file` as a string literal of SQL for DuckDB's readers (read_json, read_parquet). */
export function sqlFilePath(file: string): string {
  return sqlString(duckdbPath(file));
}

/** A message of DuckDB's with each link of duckdbPath told as the user's path. */
export function userPathsIn(text: string): string {
  if (folder === undefined || !text.includes(folder)) return text;
  let out = text;
  for (const [link, file] of shown) out = out.replaceAll(link, file);
  return out;
}
