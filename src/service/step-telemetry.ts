/**
 * Finds the telemetry a step wrote and turns it into the run artifact `telemetry-<n>-otel.parquet`.
 * Where a step's telemetry can be: every file in the folder given to it as RUNLENS_TELEMETRY_DIR; else
 * one of the files named by the engine's own flags (`--otel-parquet-file-name` under target/metadata,
 * `--otel-file-name` under logs); the engine's default Parquet path, target/metadata/otel.parquet; or
 * the output of a `runlens` step (generate, migrate, record: -o FILE or --project-dir DIR).
 * Every file a step wrote is checked by reading it through the producer's converter (src/produce), so a
 * file that is cut off or not telemetry is refused with a note rather than stored; one Parquet file is
 * stored as written, JSONL converted, and several files become one artifact holding all their records.
 *
 * Steps of a run share its folder, so a later step may write the same file again (the engine's Parquet
 * sink truncates it per run, its JSONL sink appends) or delete it (`dbt clean`): each step's telemetry
 * is copied to a folder of the runner's as soon as the step ends (keepStepTelemetry), and stored from
 * there once the run is over.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, open, readdir, readFile, stat, type FileHandle } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
// The one place this service calls the producer's converter (src/produce, issue 3).
import { convertFile, readRecords } from '../produce/convert.js';
import { writeParquetFile } from '../produce/parquet-writer.js';
import { outputPath, STDOUT } from '../produce/output-path.js';

export interface TelemetryFile {
  path: string;
  format: 'parquet' | 'jsonl';
  /** a file the engine's JSONL sink appends to (--otel-file-name); every other writer writes its file whole */
  appends?: boolean;
  /** JSONL a step appended to a file that was there before it: where its own bytes start */
  appendedFrom?: number;
}

/** A file at a named place as it was before a step: its identity and last change, and for JSONL its last bytes. */
interface FileState {
  key: string;
  ino: number;
  size: number;
  /** up to TAIL bytes before `size`: the same bytes there afterwards mean the step appended */
  tail: Buffer | null;
  /** the file held open while the step runs, so that a new file made in its place gets another inode */
  handle: FileHandle | null;
}

/** The files at a step's named places before it ran; `release` closes the ones held open. */
export interface StepBefore {
  states: Map<string, FileState | null>;
  release(): Promise<void>;
}

const TAIL = 64 * 1024;

export const artifactName = (step: number): string => `telemetry-${step}-otel.parquet`;

const formatOf = (name: string): TelemetryFile['format'] | null =>
  /\.parquet$/i.test(name) ? 'parquet' : /\.jsonl(\.gz)?$/i.test(name) ? 'jsonl' : null;

function flagValue(argv: string[], flag: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === flag) return argv[i + 1];
    if (argv[i]!.startsWith(flag + '=')) return argv[i]!.slice(flag.length + 1);
  }
  return undefined;
}

/**
 * A file's identity and last change, or null when there is no file. `hold`: the file of an appending
 * sink, kept open (and its last bytes read) so that after the step an append can be told from a file
 * written anew: while it is open its inode cannot be freed and given to a file made in its place.
 */
async function fileState(path: string, hold = false): Promise<FileState | null> {
  let handle: FileHandle | null = null;
  try {
    if (hold) handle = await open(path, 'r');
    const s = handle ? await handle.stat() : await stat(path);
    if (!s.isFile()) {
      await handle?.close();
      return null;
    }
    const state: FileState = { key: `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`, ino: s.ino, size: s.size, tail: null, handle };
    if (handle && s.size > 0) state.tail = await readRange(path, Math.max(0, s.size - TAIL), s.size);
    return state;
  } catch {
    await handle?.close().catch(() => undefined);
    return null;
  }
}

async function readRange(path: string, from: number, to: number): Promise<Buffer> {
  const f = await open(path, 'r');
  try {
    const buf = Buffer.alloc(to - from);
    const { bytesRead } = await f.read(buf, 0, buf.length, from);
    return buf.subarray(0, bytesRead);
  } finally {
    await f.close();
  }
}

/**
 * Where a step's own bytes start in a JSONL file that was there before it: the same file (inode),
 * grown, with the bytes it ended with still in place. Otherwise (a new file, one written anew) 0.
 * The file was held open meanwhile, so the same inode is the same file, not a new one reusing it.
 */
async function appendedFrom(path: string, was: FileState | null | undefined, now: FileState): Promise<number> {
  if (!was?.tail || was.ino !== now.ino || now.size <= was.size) return 0;
  const same = (await readRange(path, was.size - was.tail.length, was.size)).equals(was.tail);
  return same ? was.size : 0;
}

function runlensOutput(argv: string[], cwd: string): string | undefined {
  const output = flagValue(argv, '-o') ?? flagValue(argv, '--output') ?? flagValue(argv, '--out');
  const projectDir = flagValue(argv, '--project-dir');
  const format = flagValue(argv, '--format');
  if (output === STDOUT || (output === undefined && projectDir === undefined)) return undefined;
  try {
    return outputPath({ output, projectDir, format: format === 'parquet' || format === 'jsonl' ? format : undefined }, cwd);
  } catch {
    return undefined; // options the command itself refused
  }
}

/** Where a step's command line says its telemetry goes, besides RUNLENS_TELEMETRY_DIR. */
function namedPlaces(argv: string[], cwd: string): TelemetryFile[] {
  const places: TelemetryFile[] = [];
  const project = resolve(cwd, flagValue(argv, '--project-dir') ?? '.');
  const parquetName = flagValue(argv, '--otel-parquet-file-name') ?? 'otel.parquet';
  places.push({ path: resolve(project, flagValue(argv, '--target-path') ?? 'target', 'metadata', parquetName), format: 'parquet' });
  const jsonlName = flagValue(argv, '--otel-file-name');
  if (jsonlName) places.push({ path: resolve(project, flagValue(argv, '--log-path') ?? 'logs', jsonlName), format: 'jsonl', appends: true });
  // A `runlens generate|migrate|record -o FILE` step's telemetry is where the command writes it (-o
  // FILE, or the engine layout under --project-dir); these commands write the file whole, never append.
  const path = argv[0] === 'runlens' ? runlensOutput(argv, cwd) : undefined;
  const outputFormat = path ? formatOf(path) : null;
  if (path && outputFormat) places.push({ path, format: outputFormat });
  // A place outside the run's folder (`--target-path ../../other-run`) is not this run's to store.
  return places.filter((p) => !relative(cwd, p.path).startsWith('..') && !isAbsolute(relative(cwd, p.path)));
}

/**
 * The files at a step's named places before it runs. Steps of a run share its folder: a file an
 * earlier step wrote there is the step's telemetry only if the step writes it again.
 */
export async function telemetryBefore(argv: string[], cwd: string): Promise<StepBefore> {
  const states = new Map<string, FileState | null>();
  for (const p of namedPlaces(argv, cwd)) states.set(p.path, await fileState(p.path, p.appends));
  return {
    states,
    async release() {
      for (const s of states.values()) await s?.handle?.close().catch(() => undefined);
    },
  };
}

/**
 * The telemetry files of one finished step ([] when it wrote none): every file it put into its
 * RUNLENS_TELEMETRY_DIR; else the file it wrote at a named place, Parquet preferred (the engine's two
 * sinks of one invocation carry the same records).
 */
export async function findStepTelemetry(argv: string[], cwd: string, telemetryDir: string, before: StepBefore): Promise<TelemetryFile[]> {
  const inDir: TelemetryFile[] = [];
  try {
    for (const name of (await readdir(telemetryDir)).sort()) {
      const format = formatOf(name);
      if (format && (await fileState(join(telemetryDir, name)))) inDir.push({ path: join(telemetryDir, name), format });
    }
  } catch {
    /* the step removed the folder (or put a file in its place) */
  }
  if (inDir.length) return inDir;
  const found: TelemetryFile[] = [];
  for (const p of namedPlaces(argv, cwd)) {
    const now = await fileState(p.path);
    const was = before.states.get(p.path);
    if (now === null || now.key === was?.key) continue;
    const from = p.appends ? await appendedFrom(p.path, was, now) : 0;
    found.push(from ? { ...p, appendedFrom: from } : p);
  }
  const one = found.find((f) => f.format === 'parquet') ?? found[0];
  return one ? [one] : [];
}

/**
 * A copy of a step's telemetry in `keepDir` (a folder of the step's own, which no step writes), made
 * as soon as the step ends: of JSONL it appended, only the appended bytes. A copy, not a link: the
 * engine's Parquet sink truncates the same inode.
 */
export async function keepStepTelemetry(file: TelemetryFile, keepDir: string): Promise<TelemetryFile> {
  const kept = join(keepDir, basename(file.path));
  if (file.appendedFrom) await pipeline(createReadStream(file.path, { start: file.appendedFrom }), createWriteStream(kept, { flags: 'wx' }));
  else await copyFile(file.path, kept);
  return { path: kept, format: file.format };
}

/**
 * The artifact bytes for a step's telemetry files (null when none could be stored), and the files
 * refused with why. Each file is read through the converter into `scratchDir` first, which checks
 * it as a load would read it (a cut-off Parquet, a JSONL line cut short); one Parquet file is then
 * stored as written, and several become one Parquet file with all their records, in the files' order.
 */
export async function telemetryArtifact(files: TelemetryFile[], scratchDir: string, step: number): Promise<{ bytes: Buffer | null; refused: { file: TelemetryFile; error: Error }[] }> {
  const good: { file: TelemetryFile; converted: string }[] = [];
  const refused: { file: TelemetryFile; error: Error }[] = [];
  for (const [i, file] of files.entries()) {
    const converted = join(scratchDir, `${i}-${artifactName(step)}`);
    try {
      await convertFile(file.path, converted);
      good.push({ file, converted });
    } catch (e) {
      refused.push({ file, error: e as Error });
    }
  }
  if (good.length === 0) return { bytes: null, refused };
  if (good.length === 1) return { bytes: await readFile(good[0]!.file.format === 'parquet' ? good[0]!.file.path : good[0]!.converted), refused };
  const out = join(scratchDir, artifactName(step));
  await writeParquetFile((async function* () {
    for (const g of good) yield* readRecords(g.converted, 'parquet');
  })(), out);
  return { bytes: await readFile(out), refused };
}
