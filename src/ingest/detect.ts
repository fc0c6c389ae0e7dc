/** Expand PATH arguments (files, folders recursively, globs) and detect each file's format by content. */
import type { Stats } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import fg from 'fast-glob';
import { InputError, systemReason } from '../errors.js';
import { sniffLegacy, type LegacyKind } from '../legacy/sniff.js';
import { refuseOutsideStep } from '../service/job-step.js';
import { otherFileKind } from '../file-kind.js';
import { utf16Problem } from './text-encoding.js';

/** Telemetry (JSONL, Parquet), or a file of the older engine (translated on the fly: src/legacy). */
export type InputFormat = 'jsonl' | 'parquet' | `legacy-${LegacyKind}`;

export interface InputFile {
  path: string;
  format: InputFormat;
  gzip: boolean;
  size: number;
  /** envelope key style of the first record: snake_case (current) or camelCase (builds before 2025-08) */
  keyStyle: 'snake' | 'camel';
  /** uncompressed JSONL: bytes per line, estimated from samples at the start and the middle of the file */
  bytesPerLine?: number;
  /** a translation of another file: its path and format are the ones reported */
  shownAs?: { path: string; format: InputFormat };
}

/** Bytes read at each sample point: the head (format, key style) and the middle (line length). */
const SAMPLE_BYTES = 65536;

/** Bytes per line in a sample that starts anywhere in a line: from the first newline to the last. */
function bytesPerLine(sample: Buffer): number | undefined {
  const first = sample.indexOf(0x0a);
  const last = sample.lastIndexOf(0x0a);
  let lines = 0;
  for (let i = first; i !== -1 && i < last; i = sample.indexOf(0x0a, i + 1)) lines++;
  return lines > 0 ? (last - first) / lines : undefined;
}

/** Files a folder is searched for: telemetry, and the older engine's artifacts and logs (logs/dbt.log). */
const TELEMETRY_EXT = /\.(jsonl|ndjson|json|parquet|log)(\.gz)?$/i;

/** By convention - is standard input, which runlens does not read (a file can be read twice, a pipe cannot). */
export function refuseStdin(arg: string): void {
  if (arg === '-') throw new InputError('reading telemetry from standard input is not supported: save it to a file and give its path', arg);
}

/** A PATH that exists but is not a regular file or folder (a pipe, a device) is refused for what it is. */
export function refuseNotRegular(arg: string, st: Stats): void {
  const what = otherFileKind(st);
  if (what === undefined) return;
  throw new InputError(`${what}: runlens reads regular files and folders (save the data to a file and give its path)`, arg);
}

/**
 * Resolve PATH arguments to files, in a stable order. A path that matches nothing is an error.
 * (Several PATHs can name one file: namedFiles gives each file once.)
 */
export async function expandPaths(args: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const arg of args) {
    refuseStdin(arg);
    refuseOutsideStep(arg, 'input', { folderItself: true });
    let st;
    try {
      st = await stat(arg);
    } catch {
      st = undefined;
    }
    if (st) refuseNotRegular(arg, st);
    if (st?.isFile()) out.push(arg);
    else if (st?.isDirectory()) {
      const found = await folderFiles(arg);
      if (found.length === 0) throw new InputError('no telemetry files in this folder (looked for .jsonl, .ndjson, .json, .parquet and .log, optionally .gz)', arg);
      // (a loop, not push(...): a spread of a folder's every file can overflow the stack)
      for (const f of found) out.push(f);
    } else if (fg.isDynamicPattern(arg)) {
      // what the shell would give: files as named, and folders, read as a folder argument is
      const found: string[] = [];
      const walked = new Set<string>();
      // (** does not go through links to folders, as in the shell: a link back up would be a loop)
      for (const m of (await fg(arg, { onlyFiles: false, followSymbolicLinks: !arg.includes('**') })).sort()) {
        const mst = await stat(m).catch(() => undefined);
        if (mst?.isDirectory()) for (const f of await folderFiles(m, walked)) found.push(f);
        else if (mst?.isFile()) found.push(m);
      }
      if (found.length === 0) throw new InputError('no file matches this pattern (nor a telemetry file in a folder it matches)', arg);
      for (const f of found) out.push(f);
    } else {
      throw new InputError(systemReason({ code: 'ENOENT' }), arg);
    }
  }
  // (a folder inside may hold links to files elsewhere)
  for (const f of out) refuseOutsideStep(f, 'input');
  return [...new Set(out)];
}

/**
 * The files PATH arguments name, each file once however many PATHs name it (`a.jsonl`,
 * `./a.jsonl`, a link, a hard link: one device and inode), under the first path found for it,
 * with every argument that named it, in order.
 */
export async function namedFiles(args: string[]): Promise<Map<string, string[]>> {
  const byId = new Map<string, { path: string; args: string[] }>();
  for (const arg of args) {
    for (const f of await expandPaths([arg])) {
      const st = await stat(f).catch(() => undefined);
      const id = st ? `${st.dev}:${st.ino}` : `path:${f}`;
      const named = byId.get(id);
      if (named === undefined) byId.set(id, { path: f, args: [arg] });
      else if (!named.args.includes(arg)) named.args.push(arg);
    }
  }
  return new Map([...byId.values()].map((n) => [n.path, n.args]));
}

/**
 * A folder's telemetry files, in every folder under it (links followed), sorted. Each real folder
 * is walked once (`walked`: their real paths), so a link back up the tree is not a loop.
 */
async function folderFiles(dir: string, walked = new Set<string>()): Promise<string[]> {
  const found: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const here = path.join(dir, rel);
    const real = await realpath(here).catch(() => undefined);
    if (real === undefined || walked.has(real)) return;
    walked.add(real);
    const entries = await readdir(here, { withFileTypes: true }).catch((e: unknown) => {
      throw new InputError(systemReason(e), here);
    });
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const r = path.join(rel, e.name);
      const kind = e.isSymbolicLink() ? await stat(path.join(dir, r)).catch(() => undefined) : e;
      if (kind?.isDirectory()) await walk(r);
      else if (kind?.isFile() && TELEMETRY_EXT.test(e.name)) found.push(r);
    }
  };
  await walk('');
  // (the order of the relative paths, as the folder's files are listed everywhere)
  return found.map((f) => f.split(path.sep).join('/')).sort().map((f) => path.join(dir, f));
}

/**
 * Every PATH must add something to what a command reads: one that adds nothing (a folder or glob of
 * files none of which gave what the command looks for) would let it succeed on what it never saw, so
 * it is an input error naming the PATH. `filesOf(arg)` gives the files a PATH expanded to and whether
 * each added something; the message is `SUBJECT: the file holds LACK` (or its one file, its N files).
 */
export function everyPathAdds(paths: readonly string[], filesOf: (arg: string) => { path: string; adds: boolean }[], subject: string, lack: string): void {
  for (const arg of paths) {
    const files = filesOf(arg);
    if (!files.some((f) => f.adds)) {
      const what = files.length === 1 ? (files[0]!.path === arg ? 'the file holds' : 'its one file holds') : `its ${files.length} files hold`;
      throw new InputError(`${subject}: ${what} ${lack}`, arg);
    }
  }
}

/** Read the first bytes to tell Parquet from (gzipped) JSONL; extensions are only a hint. */
export async function detectFile(file: string): Promise<InputFile> {
  refuseOutsideStep(file, 'input');
  const fh = await open(file, 'r').catch((e: NodeJS.ErrnoException) => {
    throw new InputError(`cannot open: ${e.code ?? e.message}`, file);
  });
  try {
    const size = (await fh.stat()).size;
    const head = Buffer.alloc(Math.min(size, SAMPLE_BYTES));
    await fh.read(head, 0, head.length, 0);
    const truncated = () => new InputError('truncated Parquet file (no footer): it is complete only once its writer has finished', file);
    // a zero-byte .parquet is what a writer killed before its first page leaves, not an empty JSONL file
    if (size === 0 && /\.parquet$/i.test(file)) throw truncated();
    if (size === 0) return { path: file, format: 'jsonl', gzip: false, size, keyStyle: 'snake' };
    if (head.subarray(0, 4).toString('latin1') === 'PAR1') {
      const tail = Buffer.alloc(4);
      await fh.read(tail, 0, 4, size - 4);
      if (size < 12 || tail.toString('latin1') !== 'PAR1') throw truncated();
      return { path: file, format: 'parquet', gzip: false, size, keyStyle: 'snake' };
    }
    if (/\.parquet$/i.test(file)) throw new InputError('not a Parquet file (no PAR1 magic)', file);
    const gzip = head[0] === 0x1f && head[1] === 0x8b;
    let bytes = head;
    if (gzip) {
      const { gunzipSync } = await import('node:zlib');
      try {
        bytes = gunzipSync(head, { finishFlush: 2 /* Z_SYNC_FLUSH: a prefix is enough */ });
      } catch {
        bytes = Buffer.alloc(0);
      }
    }
    const utf16 = utf16Problem(bytes);
    if (utf16) throw new InputError(utf16, file);
    const text = bytes.toString('utf8');
    const legacy = sniffLegacy(text);
    if (legacy) return { path: file, format: `legacy-${legacy}`, gzip, size, keyStyle: 'snake' };
    // The first JSON object line decides: lines before it that are not one (garbage, an array) are
    // bad lines of the file, reported as any other; a file without one in its head is not telemetry.
    const lines = text.split('\n');
    const firstLine = lines.findIndex((l) => l.trim() !== '');
    const first = lines.find((l) => l.trimStart().startsWith('{')) ?? '';
    if (firstLine !== -1 && first === '')
      throw new InputError(
        `not JSONL telemetry: the first line is not a JSON object${/\.log(\.gz)?$/i.test(file) ? ' (a text log? the older engine writes JSON logs with --log-format json or --log-format-file json)' : ''}`,
        file, firstLine + 1);
    const keyStyle = /"(traceId|recordType|spanId)"\s*:/.test(first) && !/"trace_id"\s*:/.test(first) ? 'camel' : 'snake';
    let perLine: number | undefined;
    if (!gzip && size > 4 * SAMPLE_BYTES) {
      const middle = Buffer.alloc(SAMPLE_BYTES);
      await fh.read(middle, 0, SAMPLE_BYTES, Math.floor(size / 2));
      const estimates = [bytesPerLine(head), bytesPerLine(middle)].filter((x) => x !== undefined);
      // the larger estimate: a buffer sized from a short estimate holds fewer lines than meant
      if (estimates.length) perLine = Math.max(...estimates);
    }
    return { path: file, format: 'jsonl', gzip, size, keyStyle, bytesPerLine: perLine };
  } finally {
    await fh.close();
  }
}
