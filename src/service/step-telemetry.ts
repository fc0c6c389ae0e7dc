/**
 * Finds the telemetry a step wrote and turns it into the run artifact `telemetry-<n>-otel.parquet`.
 * Where a step's telemetry can be: a file in the folder given to it as RUNLENS_TELEMETRY_DIR; the
 * files named by the engine's own flags (`--otel-parquet-file-name` under target/metadata,
 * `--otel-file-name` under logs); the engine's default Parquet path, target/metadata/otel.parquet; or
 * the output of a `runlens` step (generate, migrate, record: -o FILE or --project-dir DIR).
 * Parquet is stored as written; JSONL is converted by the producer's convertFile (src/produce).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
// The one place this service calls the producer's converter (src/produce, issue 3).
import { convertFile } from '../produce/convert.js';
import { outputPath, STDOUT } from '../produce/output-path.js';

export interface TelemetryFile {
  path: string;
  format: 'parquet' | 'jsonl';
}

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

/** A file's identity and last change, or null when there is no file. */
async function signature(path: string): Promise<string | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}` : null;
  } catch {
    return null;
  }
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
  if (jsonlName) places.push({ path: resolve(project, flagValue(argv, '--log-path') ?? 'logs', jsonlName), format: 'jsonl' });
  // A `runlens generate|migrate|record -o FILE` step's telemetry is where the command writes it (-o
  // FILE, or the engine layout under --project-dir).
  const path = argv[0] === 'runlens' ? runlensOutput(argv, cwd) : undefined;
  const outputFormat = path ? formatOf(path) : null;
  if (path && outputFormat) places.push({ path, format: outputFormat });
  return places;
}

/**
 * The files at a step's named places before it runs. Steps of a run share its folder: a file an
 * earlier step wrote there is the step's telemetry only if the step writes it again.
 */
export async function telemetryBefore(argv: string[], cwd: string): Promise<Map<string, string | null>> {
  const before = new Map<string, string | null>();
  for (const p of namedPlaces(argv, cwd)) before.set(p.path, await signature(p.path));
  return before;
}

/** The telemetry file of one finished step, Parquet preferred, or null when it wrote none. */
export async function findStepTelemetry(argv: string[], cwd: string, telemetryDir: string, before: Map<string, string | null>): Promise<TelemetryFile | null> {
  const found: TelemetryFile[] = [];
  try {
    for (const name of (await readdir(telemetryDir)).sort()) {
      const format = formatOf(name);
      if (format && (await signature(join(telemetryDir, name)))) found.push({ path: join(telemetryDir, name), format });
    }
  } catch {
    /* the step removed the folder (or put a file in its place) */
  }
  for (const p of namedPlaces(argv, cwd)) {
    const now = await signature(p.path);
    if (now !== null && now !== before.get(p.path)) found.push(p);
  }
  return found.find((f) => f.format === 'parquet') ?? found[0] ?? null;
}

/** The artifact bytes for a step's telemetry file (JSONL converted to Parquet in `scratchDir`). */
export async function telemetryArtifact(file: TelemetryFile, scratchDir: string, step: number): Promise<Buffer> {
  if (file.format === 'parquet') return readFile(file.path);
  const out = join(scratchDir, artifactName(step));
  await convertFile(file.path, out);
  return readFile(out);
}
