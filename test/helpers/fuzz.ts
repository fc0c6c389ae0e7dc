/**
 * The seeded fuzz of issue 20 (test/core/fuzz-*.test.ts): malformed variants of real samples and of
 * generated runs (truncations, byte flips, invalid UTF-8, lines cut short, wrong JSON types, damaged
 * gzip and Parquet) through `load`, `load --lenient`, `gate` and `validate`, and the promises each
 * must keep: exit 0, 1 or 2 only, never an internal error, every error names its file (and its line,
 * for JSONL), a gate never passes input it could not read in full or a run cut before its invocation
 * ended, what a load refuses validate reports, --lenient keeps every valid line, a damaged gzip is an
 * error. Commands run in the test's process (src/cli.ts main): a process per command would take
 * minutes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { expect } from 'vitest';
import type { CliResult } from './cli.js';
import { runInProcess } from './in-process.js';

export const FUZZ_SEED = 0x2020;
/** Per fuzz test: generous, as a timed-out test would go on running beside the next one. */
export const FUZZ_TIMEOUT_MS = 300_000;

export interface JsonlSource {
  name: string;
  lines: Buffer[];
  /** the end offset (in the joined text) of each run's invocation SpanEnd line */
  invocationEnds: number[];
}

interface Variant {
  name: string;
  path: string;
  format: 'jsonl' | 'gzip' | 'parquet';
  /** records in the variant when exactly one line of it is damaged: --lenient must keep all the others */
  recordsIfOneLineLost?: number;
  /** a run's invocation SpanEnd is not (wholly) in the variant */
  invocationEndMissing?: boolean;
}

export function jsonlSource(name: string, text: Buffer): JsonlSource {
  const lines: Buffer[] = [];
  const invocationEnds: number[] = [];
  let from = 0;
  for (let nl = text.indexOf(0x0a); nl !== -1; nl = text.indexOf(0x0a, from)) {
    const line = text.subarray(from, nl);
    lines.push(line);
    const r = JSON.parse(line.toString('utf8')) as { record_type?: string; event_type?: string };
    if (r.record_type === 'SpanEnd' && r.event_type?.endsWith('.Invocation')) invocationEnds.push(nl);
    from = nl + 1;
  }
  return { name, lines, invocationEnds };
}

const join = (lines: Buffer[]) => Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));

/** JSONL damage: the text and what the assertions need to know of it. */
function damageJsonl(src: JsonlSource, rnd: () => number): { label: string; text: Buffer; oneLineLost?: boolean; cutAt?: number } {
  const pick = <T,>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const lines = [...src.lines];
  const i = Math.floor(rnd() * lines.length);
  const whole = join(lines);
  switch (pick(['truncate', 'truncate-lines', 'flip', 'utf8', 'cut-line', 'wrong-type', 'wrong-type', 'trailing-comma', 'repeat'] as const)) {
    case 'truncate': {
      const cut = 1 + Math.floor(rnd() * (whole.length - 1));
      return { label: `truncate@${cut}`, text: whole.subarray(0, cut), cutAt: cut };
    }
    case 'truncate-lines': {
      const text = join(lines.slice(0, i + 1));
      return { label: `truncate-lines@${i + 1}`, text, cutAt: text.length };
    }
    case 'flip': {
      const text = Buffer.from(whole);
      const n = 1 + Math.floor(rnd() * 4);
      for (let k = 0; k < n; k++) text[Math.floor(rnd() * text.length)]! ^= 1 + Math.floor(rnd() * 255);
      return { label: `flip x${n}`, text };
    }
    case 'utf8': {
      const line = lines[i]!;
      const quotes = [...line.keys()].filter((k) => line[k] === 0x22);
      const at = pick(quotes) + 1;
      const bad = pick([[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]]);
      lines[i] = Buffer.concat([line.subarray(0, at), Buffer.from(bad), line.subarray(at)]);
      return { label: `utf8@${i + 1}`, text: join(lines), oneLineLost: true };
    }
    case 'cut-line': {
      const line = lines[i]!;
      lines[i] = line.subarray(0, Math.floor(rnd() * line.length));
      return { label: `cut-line@${i + 1}`, text: join(lines), oneLineLost: true };
    }
    case 'wrong-type': {
      const r = JSON.parse(lines[i]!.toString('utf8')) as Record<string, unknown>;
      const field = pick(['record_type', 'trace_id', 'span_id', 'parent_span_id', 'start_time_unix_nano', 'end_time_unix_nano', 'time_unix_nano',
        'severity_number', 'attributes', 'status', 'links', 'span_name', 'body', 'event_type']);
      const value = pick([123, 1.5, 1234567890123, true, {}, [], 'x', null, { a: 1 }, [1, 2], '']);
      r[field] = value;
      lines[i] = Buffer.from(JSON.stringify(r));
      return { label: `wrong-type@${i + 1} ${field}=${JSON.stringify(value)}` , text: join(lines) };
    }
    case 'trailing-comma': {
      const line = lines[i]!.toString('utf8');
      lines[i] = Buffer.from(`${line.slice(0, -1)},}`);
      return { label: `trailing-comma@${i + 1}`, text: join(lines) };
    }
    case 'repeat': {
      const n = 1 + Math.floor(rnd() * 5);
      return { label: `repeat ${n} from ${i + 1}`, text: join([...lines.slice(0, i + n), ...lines.slice(i)]) };
    }
  }
}

/** Gzip damage: the (possibly damaged) text gzipped, then cut or flipped past the header, or left whole. */
function damageGzip(text: Buffer, rnd: () => number): { label: string; bytes: Buffer } {
  const gz = gzipSync(text);
  const r = rnd();
  if (r < 0.4) {
    const cut = 10 + Math.floor(rnd() * (gz.length - 10));
    return { label: `gzip cut@${cut}`, bytes: gz.subarray(0, cut) };
  }
  if (r < 0.8) {
    const bytes = Buffer.from(gz);
    const n = 1 + Math.floor(rnd() * 3);
    for (let k = 0; k < n; k++) bytes[10 + Math.floor(rnd() * (bytes.length - 10))]! ^= 1 + Math.floor(rnd() * 255);
    return { label: `gzip flip x${n}`, bytes };
  }
  return { label: 'gzip', bytes: gz };
}

function damageParquet(bytes: Buffer, rnd: () => number): { label: string; bytes: Buffer } {
  const r = rnd();
  if (r < 0.3) {
    const cut = 1 + Math.floor(rnd() * (bytes.length - 1));
    return { label: `parquet cut@${cut}`, bytes: bytes.subarray(0, cut) };
  }
  const out = Buffer.from(bytes);
  if (r < 0.6) {
    const at = Math.floor(rnd() * (out.length - 64));
    out.fill(0, at, at + 64);
    return { label: `parquet zero@${at}`, bytes: out };
  }
  // in the footer (the schema and row group metadata) or anywhere
  const footer = rnd() < 0.5;
  const n = 1 + Math.floor(rnd() * 4);
  for (let k = 0; k < n; k++) {
    const at = footer ? out.length - 8 - Math.floor(rnd() * Math.min(2000, out.length - 8)) : Math.floor(rnd() * out.length);
    out[at]! ^= 1 + Math.floor(rnd() * 255);
  }
  return { label: `parquet flip x${n}${footer ? ' footer' : ''}`, bytes: out };
}

/** Parquet files the model cannot hold all of: a span's trace or span id null, an unknown record type. */
export async function misshapenParquet(dir: string, src: string, rnd: () => number, n: number): Promise<{ label: string; path: string }[]> {
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  const out: { label: string; path: string }[] = [];
  try {
    // rows of spans: a log record may lack a trace or span id
    const spans = (await c.runAndReadAll(`SELECT file_row_number + 1 FROM read_parquet('${src}', file_row_number = true) WHERE record_type <> 'LogRecord'`))
      .getRows().map((r) => Number(r[0]));
    for (let k = 0; k < n; k++) {
      const row = spans[Math.floor(rnd() * spans.length)]!;
      const [col, value] = [['trace_id', 'NULL'], ['span_id', 'NULL'], ['record_type', `'Bogus'`]][k % 3]!;
      const p = path.join(dir, `${path.basename(src, '.parquet')}-${col}-${row}.parquet`);
      await c.run(`COPY (SELECT * EXCLUDE (file_row_number) REPLACE (CASE WHEN file_row_number + 1 = ${row} THEN ${value} ELSE ${col} END AS ${col})
                         FROM read_parquet('${src}', file_row_number = true) ORDER BY file_row_number) TO '${p}' (FORMAT parquet)`);
      out.push({ label: `${col}=${value}@${row}`, path: p });
    }
  } finally {
    c.closeSync();
    inst.closeSync();
  }
  return out;
}

export function variants(dir: string, jsonl: JsonlSource[], parquet: string[], count: number, rnd: () => number, tag: string): Variant[] {
  const out: Variant[] = [];
  for (let v = 0; v < count; v++) {
    const name = `${tag}-${String(v).padStart(3, '0')}`;
    if (parquet.length && rnd() < 0.2) {
      const src = parquet[Math.floor(rnd() * parquet.length)]!;
      const d = damageParquet(readFileSync(src), rnd);
      const p = path.join(dir, `${name}.parquet`);
      writeFileSync(p, d.bytes);
      out.push({ name: `${name} ${path.basename(src)} ${d.label}`, path: p, format: 'parquet' });
      continue;
    }
    const src = jsonl[Math.floor(rnd() * jsonl.length)]!;
    const d = damageJsonl(src, rnd);
    const invocationEndMissing = d.cutAt !== undefined && src.invocationEnds.some((end) => end > d.cutAt!);
    if (rnd() < 0.25) {
      const g = damageGzip(d.text, rnd);
      const p = path.join(dir, `${name}.jsonl.gz`);
      writeFileSync(p, g.bytes);
      out.push({ name: `${name} ${src.name} ${d.label} ${g.label}`, path: p, format: 'gzip', invocationEndMissing });
      continue;
    }
    const p = path.join(dir, `${name}.jsonl`);
    writeFileSync(p, d.text);
    out.push({
      name: `${name} ${src.name} ${d.label}`, path: p, format: 'jsonl', invocationEndMissing,
      recordsIfOneLineLost: d.oneLineLost ? src.lines.length - 1 : undefined,
    });
  }
  return out;
}

interface Outcome {
  load: CliResult;
  lenient: CliResult;
  gate: CliResult;
  validate: CliResult;
}

async function run(v: Variant): Promise<Outcome> {
  return {
    load: await runInProcess(['load', v.path]),
    lenient: await runInProcess(['load', v.path, '--lenient', '--format', 'json']),
    gate: await runInProcess(['gate', v.path]),
    validate: await runInProcess(['validate', v.path, '--no-warnings']),
  };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The promises of the issue, for one variant. */
function check(v: Variant, o: Outcome): void {
  const at = (what: string) => `${v.name}: ${what}`;
  for (const [cmd, r] of Object.entries(o) as [string, CliResult][]) {
    expect.soft([0, 1, 2], at(`${cmd} exit ${r.code}: ${r.stderr}`)).toContain(r.code);
    expect.soft(r.stderr, at(cmd)).not.toMatch(/internal error/i);
    if (r.code === 2) expect.soft(r.stderr, at(`${cmd} names the file`)).toContain(v.path);
  }
  expect.soft([0, 2], at('load')).toContain(o.load.code);
  expect.soft([0, 2], at('load --lenient')).toContain(o.lenient.code);
  // a refused JSONL line is named by its line
  if (v.format === 'jsonl' && o.load.code === 2) expect.soft(o.load.stderr, at('load names the line')).toMatch(new RegExp(`${escape(v.path)}:\\d+: \\S`));
  // a gate never passes input it could not read in full...
  if (o.load.code !== 0) expect.soft(o.gate.code, at(`gate on input load refused: ${o.load.stderr}`)).toBe(2);
  // ... nor a run cut before its invocation ended (the gate's incomplete rule)
  if (v.invocationEndMissing) expect.soft(o.gate.code, at('gate on a run cut before its invocation ended')).not.toBe(0);
  // what a load refuses, validate reports
  if (v.format !== 'parquet' && o.load.code === 2) expect.soft(o.validate.code, at(`validate of what load refused: ${o.load.stderr}`)).not.toBe(0);
  // --lenient keeps every valid line
  if (v.recordsIfOneLineLost !== undefined) {
    expect.soft(o.lenient.code, at(`load --lenient: ${o.lenient.stderr}`)).toBe(0);
    if (o.lenient.code === 0) expect.soft((JSON.parse(o.lenient.stdout) as { records: number }).records, at('records kept by --lenient')).toBe(v.recordsIfOneLineLost);
  }
  // a gzip that does not decompress whole is an error, lenient or not
  if (v.format === 'gzip') {
    let broken = false;
    try {
      gunzipSync(readFileSync(v.path));
    } catch {
      broken = true;
    }
    if (broken) {
      for (const r of [o.load, o.lenient, o.gate]) {
        expect.soft(r.code, at('damaged gzip')).toBe(2);
        expect.soft(r.stderr, at('damaged gzip')).toMatch(new RegExp(`${escape(v.path)}: (truncated|damaged) gzip`));
      }
    }
  }
}

export async function fuzz(vs: Variant[], misshapen: { label: string; path: string }[]): Promise<void> {
  const prevCi = process.env.CI;
  process.env.CI = 'true'; // no progress bar
  try {
    for (const v of vs) check(v, await run(v));
    for (const m of misshapen) {
      const v: Variant = { name: `${path.basename(m.path)} ${m.label}`, path: m.path, format: 'parquet' };
      const o = await run(v);
      check(v, o);
      expect.soft(o.load.code, v.name).toBe(2);
      expect.soft(o.load.stderr, v.name).toMatch(new RegExp(`${escape(m.path)}:\\d+: (trace_id|span_id|record_type): `));
      expect.soft(o.lenient.code, v.name).toBe(0);
    }
  } finally {
    if (prevCi === undefined) delete process.env.CI;
    else process.env.CI = prevCi;
  }
}

