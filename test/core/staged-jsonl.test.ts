/**
 * Small JSONL files of one load are read in batches (src/store/staged-jsonl.ts). Loading them so
 * gives the model, the load's report and its refusals that loading the same files one by one gives:
 * the same rows on the same lines, the same records already present, the same skipped lines.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel, type LoadReport } from '../../src/store/load.js';
import { generate } from '../../src/produce/generate/index.js';
import { tempDir } from '../helpers/fixtures.js';
import { FUSION, ROOT, samplesNote } from '../helpers/samples.js';

const fusion = samplesNote(FUSION);
const dir = tempDir();

/** The statements a model runs from now on. */
function statementsOf(db: Db): string[] {
  const seen: string[] = [];
  const run = db.run.bind(db);
  (db as { run: Db['run'] }).run = (sql, params) => {
    seen.push(sql);
    return run(sql, params);
  };
  return seen;
}

const everything = async (db: Db) => ({
  records: await db.all(`SELECT * FROM records ORDER BY file_id, line`),
  runs: await db.all(`SELECT * FROM runs ORDER BY trace_id`),
  spans: await db.all(`SELECT * FROM spans ORDER BY trace_id, span_id, record_rowid`),
  hidden: await db.scalar<number>('SELECT count(*)::INTEGER FROM record_rows WHERE record_type IS NULL'),
});

/** What a load report says of each file, without the arguments that named it. */
const said = (reports: LoadReport[]) => reports.flatMap((r) => r.files.map(({ args: _, ...f }) => f));

/** The files loaded in one load, and one load per file into another model: both models and reports, and the batches read. */
async function bothWays(files: string[], opts: { lenient?: boolean } = {}) {
  const together = await openModel();
  const oneByOne = await openModel();
  try {
    const statements = statementsOf(together);
    const t = await loadPaths(together, files, opts);
    const o: LoadReport[] = [];
    for (const f of files) o.push(await loadPaths(oneByOne, [f], opts));
    return {
      together: { model: await everything(together), files: said([t]) },
      oneByOne: { model: await everything(oneByOne), files: said(o) },
      batches: statements.filter((s) => s.includes('TEMP TABLE _staged AS')).length,
      copied: statements.filter((s) => s.startsWith('INSERT INTO record_rows SELECT * REPLACE')).length,
    };
  } finally {
    together.close();
    oneByOne.close();
  }
}

/** The lines of `file` with the envelope's keys in the camelCase of builds before 2025-08. */
function camelCase(file: string, to: string): string {
  const keys: Record<string, string> = {
    record_type: 'recordType', trace_id: 'traceId', span_id: 'spanId', span_name: 'spanName', parent_span_id: 'parentSpanId',
    event_id: 'eventId', start_time_unix_nano: 'startTimeUnixNano', end_time_unix_nano: 'endTimeUnixNano', time_unix_nano: 'timeUnixNano',
    severity_number: 'severityNumber', severity_text: 'severityText', event_type: 'eventType',
  };
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    return JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [keys[k] ?? k, v])));
  });
  writeFileSync(to, lines.join('\n') + '\n');
  return to;
}

describe('small JSONL files read in batches', () => {
  it('give the model and the report a load of each file alone gives: generated runs, a copy, camelCase, a blank line', async () => {
    const runs: string[] = [];
    for (let i = 1; i <= 4; i++) {
      const f = path.join(dir, `run-${i}.jsonl`);
      await generate({ output: f, nodes: 30, seed: i, failRate: 0.1 });
      runs.push(f);
    }
    const copy = path.join(dir, 'run-2-copy.jsonl');
    copyFileSync(runs[1]!, copy);
    const camel = camelCase(path.join(ROOT, 'samples/failed-build.jsonl'), path.join(dir, 'camel.jsonl'));
    // a blank line after the third record: DuckDB's reader skips it, the records after it keep their lines
    const lines = readFileSync(path.join(ROOT, 'samples/clean-build.jsonl'), 'utf8').split('\n');
    const blank = path.join(dir, 'blank-line.jsonl');
    writeFileSync(blank, [...lines.slice(0, 3), '', ...lines.slice(3)].join('\n'));
    const files = [runs[0]!, runs[1]!, copy, runs[2]!, camel, blank, runs[3]!, path.join(ROOT, 'samples/two-runs.jsonl')];
    const r = await bothWays(files);
    expect(r.together).toEqual(r.oneByOne);
    // read in batches: the first three files and run-3; camel alone (its key style); blank-line.jsonl from its batch, read again alone
    expect(r.batches).toBe(2);
    expect(r.copied).toBe(files.length - 2);
    expect(r.together.files.map((f) => [path.basename(f.path), f.records, f.alreadyPresent, f.duplicate])).toEqual([
      ['run-1.jsonl', expect.any(Number), 0, false],
      ['run-2.jsonl', expect.any(Number), 0, false],
      ['run-2-copy.jsonl', 0, r.together.files[1]!.records, true],
      ['run-3.jsonl', expect.any(Number), 0, false],
      ['camel.jsonl', 525, 0, false],
      ['blank-line.jsonl', 557, 0, false],
      ['run-4.jsonl', expect.any(Number), 0, false],
      ['two-runs.jsonl', expect.any(Number), expect.any(Number), false],
    ]);
    const lineAfterBlank = r.together.model.records.find((x) => x.source_file === blank && x.line === '5');
    expect(lineAfterBlank?.span_id).toBe((JSON.parse(lines[3]!) as { span_id: string }).span_id);
  });

  it.skipIf(fusion.missing)(fusion.title('give the same on the real engine files, two of them sharing a run'), async () => {
    const files = ['forwarder-otel-preview120.jsonl', 'forwarder-otel_failed-preview120.jsonl', 'forwarder-otel-preview72.jsonl'].map((f) => path.join(FUSION, f));
    const r = await bothWays(files);
    expect(r.batches).toBe(1);
    expect(r.together).toEqual(r.oneByOne);
    expect(r.together.files.map((f) => f.records + f.alreadyPresent)).toEqual([736, 21, 992]);
  });

  it('a bad line in one file: strict, the same refusal naming its file and line; lenient, the same lines kept and skipped', async () => {
    const good = [1, 2, 3].map((i) => path.join(dir, `bad-batch-${i}.jsonl`));
    for (const [i, f] of good.entries()) await generate({ output: f, nodes: 20, seed: 100 + i });
    const lines = readFileSync(good[1]!, 'utf8').split('\n');
    const record = (i: number) => JSON.parse(lines[i]!) as Record<string, unknown>;
    // lines DuckDB's reader reads: a span id written as a number (line 7), which its checks refuse; a trailing comma (line 9)
    const misshapen = path.join(dir, 'bad-batch-2-misshapen.jsonl');
    writeFileSync(misshapen, [...lines.slice(0, 6), JSON.stringify({ ...record(6), span_id: 1234567890123456 }), ...lines.slice(7)].join('\n'));
    const comma = path.join(dir, 'bad-batch-2-comma.jsonl');
    writeFileSync(comma, [...lines.slice(0, 8), lines[8]!.replace(/}$/, ',}'), ...lines.slice(9)].join('\n'));
    // a line cut short (line 7), which stops DuckDB's read of the whole batch
    const cut = path.join(dir, 'bad-batch-2-cut.jsonl');
    writeFileSync(cut, [...lines.slice(0, 6), lines[6]!.slice(0, 40), ...lines.slice(7)].join('\n'));
    // a byte order mark before line 1, which DuckDB's reader refuses in the first file of a read only
    const bom = path.join(dir, 'bad-batch-2-bom.jsonl');
    writeFileSync(bom, `\uFEFF${lines.join('\n')}`);

    for (const [bad, line, field, copied] of [[misshapen, 7, 'span_id', 2], [comma, 9, undefined, 2], [cut, 7, undefined, 0], [bom, 1, undefined, 2]] as const) {
      const files = [good[0]!, bad, good[2]!];
      const strict = await openModel();
      const alone = await openModel();
      try {
        const err = await loadPaths(strict, files).then(() => undefined, (e: Error) => e);
        const aloneErr = await loadPaths(alone, [bad]).then(() => undefined, (e: Error) => e);
        expect(err).toMatchObject({ file: bad, line, field });
        expect(err?.message).toBe(aloneErr?.message);
      } finally {
        strict.close();
        alone.close();
      }
      const r = await bothWays(files, { lenient: true });
      expect(r.together).toEqual(r.oneByOne);
      expect(r.together.files[1]).toMatchObject({ skippedLines: 1, badLines: [expect.objectContaining({ line })] });
      // the batch was read; the damaged file (or, when DuckDB could not read the batch, every file) read again alone
      expect(r.batches).toBe(1);
      expect(r.copied).toBe(copied);
    }
  });
});
