/**
 * One measured step of the core bench, in its own process so peak RSS is its own.
 * Usage: node dist/bench/core-child.js <task> <file> [arg: the trace for tree, the runs for generate]; prints one JSON line.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { listSavedQueries, runSavedQuery } from '../src/analyze/queries.js';
import { buildTreeText } from '../src/analyze/tree.js';
import { renderTreeText } from '../src/render/tree-text.js';
import { detectFile } from '../src/ingest/detect.js';
import { jsonBufferBytes } from '../src/ingest/jsonl.js';
import { sqlString } from '../src/store/db.js';
import { loadPaths, openModel } from '../src/store/load.js';
import { generate } from '../src/produce/generate/index.js';

const [task, file, arg] = process.argv.slice(2) as [string, string, string | undefined];

/** The baseline's column list: the JSONL envelope, attributes/status/links as JSON (reference/telemetry.md 2). */
const JSON_COLUMNS = `{record_type:'VARCHAR', trace_id:'VARCHAR', span_id:'VARCHAR', span_name:'VARCHAR', parent_span_id:'VARCHAR',
  links:'JSON', event_id:'VARCHAR', start_time_unix_nano:'VARCHAR', end_time_unix_nano:'VARCHAR', time_unix_nano:'VARCHAR',
  severity_number:'VARCHAR', severity_text:'VARCHAR', body:'VARCHAR', status:'JSON', event_type:'VARCHAR', attributes:'JSON'}`;

/** A database file path with no database there yet. */
function fresh(dbFile: string): string {
  for (const f of [dbFile, `${dbFile}.wal`]) rmSync(f, { force: true });
  return dbFile;
}

async function main(): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  switch (task) {
    case 'raw-jsonl':
    case 'raw-parquet':
    case 'raw-jsonl-tuned': {
      // -tuned: with the JSON buffer size runlens reads the file with, to show what it alone gives.
      const tuned = task.endsWith('-tuned');
      const inst = await DuckDBInstance.create(':memory:');
      const c = await inst.connect();
      const buffer = tuned ? `, maximum_object_size = ${jsonBufferBytes(await detectFile(file))}` : '';
      const src = task.startsWith('raw-jsonl')
        ? `read_json(${sqlString(file)}, format = 'newline_delimited', columns = ${JSON_COLUMNS}${buffer})`
        : `read_parquet(${sqlString(file)})`;
      await c.run(`CREATE TABLE t AS SELECT * FROM ${src}`);
      const n = (await c.runAndReadAll('SELECT count(*)::INTEGER FROM t')).getRows()[0]![0];
      return { ms: performance.now() - t0, records: n };
    }
    case 'raw-jsonl-files': {
      // <folder>: each file read by a statement of its own, as a load reads a folder file by file
      const inst = await DuckDBInstance.create(':memory:');
      const c = await inst.connect();
      const files = readdirSync(file).sort();
      await c.run(`CREATE TABLE t AS SELECT * FROM read_json(${sqlString(path.join(file, files[0]!))}, format = 'newline_delimited', columns = ${JSON_COLUMNS})`);
      for (const f of files.slice(1)) await c.run(`INSERT INTO t SELECT * FROM read_json(${sqlString(path.join(file, f))}, format = 'newline_delimited', columns = ${JSON_COLUMNS})`);
      const n = (await c.runAndReadAll('SELECT count(*)::INTEGER FROM t')).getRows()[0]![0];
      return { ms: performance.now() - t0, records: n, files: files.length };
    }
    case 'raw-jsonl-db': {
      // into a database file (arg), written out as it is closed, as `load --db` does
      const inst = await DuckDBInstance.create(fresh(arg!));
      const c = await inst.connect();
      await c.run(`CREATE TABLE t AS SELECT * FROM read_json(${sqlString(file)}, format = 'newline_delimited', columns = ${JSON_COLUMNS})`);
      const n = (await c.runAndReadAll('SELECT count(*)::INTEGER FROM t')).getRows()[0]![0];
      c.closeSync();
      inst.closeSync();
      return { ms: performance.now() - t0, records: n };
    }
    case 'load':
    case 'load-db': {
      const db = await openModel(task === 'load-db' ? fresh(arg!) : undefined);
      const r = await loadPaths(db, [file]);
      // a model file is written out as it is closed, as `load --db` ends
      if (task === 'load-db') db.close();
      const ms = performance.now() - t0;
      if (task === 'load-db') return { ms, records: r.records };
      const spans = await db.scalar<number>('SELECT count(*)::INTEGER FROM spans');
      return { ms, records: r.records, spans };
    }
    case 'load-both': {
      // <jsonl> and arg, its Parquet: the engine's two copies of the same runs, one kept
      const db = await openModel();
      const r = await loadPaths(db, [file, arg!]);
      return { ms: performance.now() - t0, records: r.records, present: r.alreadyPresent };
    }
    case 'queries': {
      const db = await openModel();
      await loadPaths(db, [file]);
      const out: Record<string, number> = {};
      for (const q of listSavedQueries()) {
        await runSavedQuery(db, q, {}).catch(() => undefined); // warm-up (plans, caches)
        const t = performance.now();
        const reps = 3;
        for (let i = 0; i < reps; i++) await runSavedQuery(db, q, {});
        out[q.name] = (performance.now() - t) / reps;
      }
      return { queries: out };
    }
    case 'generate': {
      // <file> [runs]: the bench's input, written by a process of its own (see bench/core.ts)
      const g = await generate({ output: file, runs: Number(arg ?? 1), nodes: 20_000, seed: 7, failRate: 0.01 });
      return { ms: performance.now() - t0, records: g.records };
    }
    case 'generate-many': {
      // <folder> <files>: one small run per file (30 nodes, about 300 KB), as a folder of many CI runs' telemetry holds
      mkdirSync(file, { recursive: true });
      let records = 0;
      for (let i = 1; i <= Number(arg); i++) records += (await generate({ output: path.join(file, `run-${String(i).padStart(4, '0')}.jsonl`), runs: 1, nodes: 30, seed: i })).records;
      return { ms: performance.now() - t0, records };
    }
    case 'tree': {
      const db = await openModel();
      await loadPaths(db, [file]);
      const id = arg ?? (await db.scalar<string>('SELECT trace_id FROM runs ORDER BY spans DESC LIMIT 1'));
      const spans = await db.scalar<number>('SELECT count(*)::INTEGER FROM spans WHERE trace_id = $t', { t: id });
      const t = performance.now();
      const text = renderTreeText(await buildTreeText(db, id));
      return { ms: performance.now() - t, spans, bytes: text.length };
    }
    default:
      throw new Error(`unknown task ${task}`);
  }
}

main().then(
  (r) => {
    process.stdout.write(JSON.stringify({ ...r, maxRssMB: process.resourceUsage().maxRSS / 1024 }) + '\n');
    process.exit(0);
  },
  (e: unknown) => {
    process.stderr.write(String((e as Error)?.stack ?? e) + '\n');
    process.exit(1);
  },
);
