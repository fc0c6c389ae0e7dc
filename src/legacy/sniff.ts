/**
 * What an older-engine file is, told from its first bytes: a JSON log stream (one event per line),
 * or a JSON document whose metadata.dbt_schema_version names the artifact (the engine writes
 * metadata first). Telemetry records (record_type) are not older-engine files.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { InputError, errorMessage } from '../errors.js';
import { utf16Problem } from '../ingest/text-encoding.js';

/** run_results.json, sources.json and JSON logs hold runs; the other artifacts hold none. */
export type LegacyKind = 'run-results' | 'sources' | 'log' | 'manifest' | 'artifact';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * First keys of the artifacts the engine writes without a schema version: graph_summary.json
 * (`_invocation_id`, `linked`) and semantic_manifest.json (`semantic_models`, ...).
 */
const ARTIFACT_KEYS = ['_invocation_id', 'semantic_models'];

const SCHEMA_RE = /"dbt_schema_version"\s*:\s*"[^"]*\/dbt\/([a-z_-]+)\/v(\d+)\.json"/;

export function kindOfSchema(artifact: string): LegacyKind {
  if (artifact === 'run-results') return 'run-results';
  if (artifact === 'sources') return 'sources';
  if (artifact === 'manifest') return 'manifest';
  return 'artifact';
}

/** Is this parsed line one event of a `--log-format json` stream (1.4+: info; 1.0-1.3: code and ts)? */
export function isLogEvent(o: Record<string, unknown>): boolean {
  if ('record_type' in o || 'recordType' in o) return false;
  return (isObj(o.info) && typeof o.info.name === 'string') || (typeof o.code === 'string' && 'ts' in o && 'msg' in o);
}

/**
 * The kind of an older-engine file from the text of its start (decompressed), or undefined for
 * anything else (telemetry JSONL, or text that is not JSON).
 */
export function sniffLegacy(head: string): LegacyKind | undefined {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (!text.startsWith('{')) return undefined;
  const nl = text.indexOf('\n');
  const first = (nl < 0 ? text : text.slice(0, nl)).trim();
  let o: unknown;
  try {
    o = JSON.parse(first);
  } catch {
    o = undefined;
  }
  if (isObj(o)) {
    if ('record_type' in o || 'recordType' in o) return undefined;
    if (isLogEvent(o)) return 'log';
    // a minified document on one line
    const meta = isObj(o.metadata) ? o.metadata : undefined;
    const sv = typeof meta?.dbt_schema_version === 'string' ? /\/dbt\/([a-z_-]+)\/v\d+\.json/.exec(meta.dbt_schema_version) : null;
    if (sv) return kindOfSchema(sv[1]!);
    if (Array.isArray(o.results)) return 'run-results';
    if (ARTIFACT_KEYS.some((k) => k in o)) return 'artifact';
    return undefined;
  }
  // A document over several lines (or longer than the head): its schema version, else a results list.
  const sv = SCHEMA_RE.exec(text);
  if (sv) return kindOfSchema(sv[1]!);
  if (/^\{\s*"(results|generated_at|elapsed_time)"\s*:/.test(text) || /"results"\s*:\s*\[\s*\{\s*"(node|unique_id|status|timing|error)"/.test(text)) return 'run-results';
  if (new RegExp(`^\\{\\s*"(${ARTIFACT_KEYS.join('|')})"\\s*:`).test(text)) return 'artifact';
  return undefined;
}

/** What a kind is called in messages. */
export function describeKind(kind: LegacyKind): string {
  switch (kind) {
    case 'run-results':
      return 'the older engine\'s run_results.json';
    case 'sources':
      return 'the older engine\'s sources.json (source freshness)';
    case 'log':
      return 'a JSON log of the older engine (--log-format json)';
    case 'manifest':
      return 'the older engine\'s manifest.json';
    case 'artifact':
      return 'an artifact of the older engine';
  }
}

/** The first bytes of a file as text (decompressed when gzipped); UTF-16 text is refused, saying so. */
export function headOf(file: string, bytes = 1 << 16): { text: string; binary: 'parquet' | null } {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new InputError(`cannot open: ${errorMessage(e)}`, file);
  }
  const buf = Buffer.alloc(bytes);
  let n: number;
  try {
    n = readSync(fd, buf, 0, buf.length, 0);
  } catch (e) {
    throw new InputError(`cannot read: ${errorMessage(e)}`, file);
  } finally {
    closeSync(fd);
  }
  const head = buf.subarray(0, n);
  if (head.subarray(0, 4).toString('latin1') === 'PAR1') return { text: '', binary: 'parquet' };
  let data = head;
  if (head[0] === 0x1f && head[1] === 0x8b) {
    try {
      data = gunzipSync(head, { finishFlush: 2 /* Z_SYNC_FLUSH: a prefix is enough */ });
    } catch {
      return { text: '', binary: null };
    }
  }
  const utf16 = utf16Problem(data);
  if (utf16) throw new InputError(utf16, file);
  return { text: data.toString('utf8'), binary: null };
}

/**
 * For commands that read telemetry files only (validate, convert): an older-engine file is refused
 * with what it is and which commands read it.
 */
export function refuseOlderEngineFile(file: string, what: string): void {
  const { text, binary } = headOf(file);
  const kind = binary ? undefined : sniffLegacy(text);
  if (!kind) return;
  const readers =
    kind === 'manifest' || kind === 'artifact'
      ? 'it holds no run (runlens reads the manifest.json beside a run_results.json by itself)'
      : 'runlens load, runs, tree, query, gate and explore read it as it is, and runlens migrate turns it into telemetry';
  throw new InputError(`${describeKind(kind)}, not telemetry: ${what}; ${readers}`, file);
}
