/**
 * Older-engine files read where they lie, by every command that reads telemetry: each is translated
 * by the code of `migrate` into a temporary JSONL file, which the normal loader reads (DuckDB's
 * reader, not JavaScript objects) and reports under the original path. The translation is
 * deterministic, so the same file read twice, or beside a migrated copy of it, gives the same records.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InputError } from '../errors.js';
import type { BadLine } from '../ingest/jsonl-lines.js';
import { detectFile, type InputFile, type InputFormat } from '../ingest/detect.js';
import { outsideRunNote } from './from-run-results.js';
import { describeManifestUse, ManifestFinder } from './manifest-finder.js';
import { migrateFiles } from './migrate.js';
import { logsLast } from './same-run.js';
import { describeKind, type LegacyKind } from './sniff.js';

export interface LegacyTranslation {
  /** the translated records */
  jsonl: string;
  /** what was read, and with which manifest (for the user) */
  note: string;
  /** damaged lines of a log skipped with lenient (a strict read stops on the first) */
  malformed: BadLine[];
  /** remove the temporary file */
  done(): void;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** Translations of one load share the manifests they read. */
export class LegacyReader {
  private readonly finder: ManifestFinder;
  constructor(manifest?: string, private readonly lenient = false) {
    this.finder = new ManifestFinder(manifest);
  }

  async translate(file: string, kind: LegacyKind): Promise<LegacyTranslation> {
    const dir = mkdtempSync(path.join(tmpdir(), 'runlens-legacy-'));
    const jsonl = path.join(dir, 'translated.jsonl');
    const done = () => rmSync(dir, { recursive: true, force: true });
    try {
      const r = await migrateFiles([file], { out: jsonl, finder: this.finder, lenient: this.lenient, lenientHint: true });
      const f = r.files[0]!;
      const runs = f.kind === 'log' ? f.invocations : [f];
      const what = `${describeKind(kind)}, ${plural(runs.length, 'run')}${runs.length ? ` (${runs.map((s) => `${s.command}, ${plural(s.nodes, 'node')}`).join('; ')})` : ''}`;
      const timing = f.kind !== 'log' ? outsideRunNote(f) : null;
      const malformed = f.kind === 'log' ? f.malformed : [];
      return { jsonl, note: `${what}; ${describeManifestUse(f.manifest, runs[0]?.invocationId, runs)}${timing ? `; ${timing}` : ''}`, malformed, done };
    } catch (e) {
      done();
      throw e;
    }
  }
}

export interface DetectedInputs {
  inputs: InputFile[];
  /** files that hold no run and were not read, and why (the engine's artifacts in folders are passed over silently) */
  skipped: { path: string; reason: string }[];
}

/** Why a file of the older engine that holds no run is not read. */
export function noRunReason(kind: LegacyKind): string {
  return kind === 'manifest'
    ? `${describeKind(kind)} holds no run: runlens uses the manifest.json beside a run_results.json by itself, or the one given with --manifest FILE`
    : `${describeKind(kind)} holds no run: runlens reads run_results.json, sources.json and --log-format json logs`;
}

/**
 * Detect every file and order them for loading. The engine's manifest.json and other artifacts hold
 * no run: in a folder or glob they are passed over, named on their own (a shell glob names them) they
 * are skipped with the reason, and an error when nothing else is left. A text log found in a folder
 * is skipped with the reason. Logs of the older engine load after everything else: where a
 * run_results.json and the log of the same invocation describe one node, the model keeps the
 * records loaded first, and the artifact is the engine's final word on each node's result.
 */
export async function detectInputs(paths: string[], args: string[]): Promise<DetectedInputs> {
  const named = new Set(args);
  const inputs: InputFile[] = [];
  const skipped: DetectedInputs['skipped'] = [];
  for (const p of paths) {
    let input: InputFile;
    try {
      input = await detectFile(p);
    } catch (e) {
      if (!named.has(p) && e instanceof InputError && /\.log(\.gz)?$/i.test(p)) {
        skipped.push({ path: p, reason: 'not a JSON log (the older engine writes one with --log-format json or --log-format-file json)' });
        continue;
      }
      throw e;
    }
    const kind = legacyKindOf(input.format);
    if (kind === 'manifest' || kind === 'artifact') {
      if (named.has(p)) skipped.push({ path: p, reason: noRunReason(kind) });
      continue;
    }
    inputs.push(input);
  }
  if (inputs.length === 0 && skipped.length > 0 && paths.length > 0) {
    const [first] = skipped;
    throw new InputError(first!.reason, first!.path);
  }
  return { inputs: logsLast(inputs, (i) => i.format === 'legacy-log'), skipped };
}

/** The older-engine kind of an input format, if it is one. */
export function legacyKindOf(format: InputFormat): LegacyKind | undefined {
  return format.startsWith('legacy-') ? (format.slice('legacy-'.length) as LegacyKind) : undefined;
}
