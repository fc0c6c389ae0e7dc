/** Hand-written run_results.json for what no real sample shows (legacy.md §1.4-1.5). */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateFiles } from '../../src/legacy/migrate.js';
import { renderMigrateReport } from '../../src/commands/migrate.js';
import { tempDir } from '../helpers/fixtures.js';
import type { Db } from '../../src/store/db.js';
import { parseRunResults, readRunResults } from '../../src/legacy/run-results.js';
import { manifest, migrateAndLoad, runResults, triple, writeJson } from './helpers.js';

const dbs: Db[] = [];
afterAll(() => dbs.forEach((d) => d.close()));

async function migrate(doc: Record<string, unknown>, man?: Record<string, unknown>) {
  const m = await migrateAndLoad([writeJson('run_results.json', doc)], { manifest: man ? writeJson('manifest.json', man) : undefined });
  dbs.push(m.db);
  return m;
}
const outcomes = (m: { nodes: Map<string, Parameters<typeof triple>[0]> }) => Object.fromEntries([...m.nodes].map(([id, r]) => [id, triple(r)]));

describe('run_results.json statuses the samples do not show', () => {
  it('warn, partial success, reused, no-op, runtime error, 1.8 saved-query NO-OP', async () => {
    const m = await migrate(runResults({
      results: [
        { id: 'test.p.warned', status: 'warn', failures: 3, message: 'Got 3 results, configured to warn if != 0', at: [1, 2] },
        { id: 'model.p.micro', status: 'partial success', message: 'batches failed', at: [2, 5], extra: { batch_results: { successful: [['2026-01-01', '2026-01-02']], failed: [['2026-01-02', '2026-01-03']] } } },
        { id: 'model.p.cached', status: 'reused', at: [1, 1.2] },
        { id: 'exposure.p.dash', status: 'no-op', message: 'NO-OP', failures: 0, at: [5, 5.1] },
        { id: 'saved_query.p.sq', status: 'success', message: 'NO-OP' },
        { id: 'source.p.raw.orders', status: 'runtime error', message: 'Database Error: relation does not exist' },
      ],
    }));
    expect(outcomes(m)).toEqual({
      'test.p.warned': 'success/-/warned',
      'model.p.micro': 'error/-/-',
      'model.p.cached': 'skipped/cached/-',
      'exposure.p.dash': 'skipped/noop/-',
      'saved_query.p.sq': 'skipped/noop/-',
      'source.p.raw.orders': 'error/-/-',
    });
    expect(m.nodes.get('test.p.warned')!.failing_rows).toBe(3);
    const err = await m.db.one(`SELECT error_text FROM node_results WHERE unique_id = 'model.p.micro'`);
    expect(String(err!.error_text)).toContain('failed batches: 2026-01-02 .. 2026-01-03');
    expect(await m.db.one('SELECT tests_warned::INT w, error::INT e, failed FROM runs')).toEqual({ w: 1, e: 2, failed: true });
  });

  it('fail-fast: the nodes never run end canceled, not skipped upstream', async () => {
    const m = await migrate(runResults({
      which: 'build', args: { fail_fast: true },
      results: [
        { id: 'model.p.a', status: 'error', message: 'Database Error', at: [1, 2] },
        { id: 'model.p.b', status: 'skipped', message: 'Skipping due to fail_fast' },
        { id: 'test.p.c', status: 'skipped', message: 'Skipping due to fail_fast' },
      ],
    }));
    expect(outcomes(m)).toEqual({ 'model.p.a': 'error/-/-', 'model.p.b': 'canceled/-/-', 'test.p.c': 'canceled/-/-' });
    expect(m.report.upstreamUnknown).toBe(0);
  });

  it('compile-only commands: success means compiled, tests get no test outcome, only the render phase', async () => {
    const m = await migrate(runResults({
      which: 'compile',
      results: [
        { id: 'model.p.a', status: 'success', at: [1, 2] },
        { id: 'test.p.not_null_a.abc', status: 'success', at: [2, 3] },
      ],
    }));
    expect(outcomes(m)).toEqual({ 'model.p.a': 'success/-/-', 'test.p.not_null_a.abc': 'success/-/-' });
    expect(await m.db.all(`SELECT DISTINCT phase FROM nodes WHERE kind = 'evaluated'`)).toEqual([{ phase: 'render' }]);
    expect(await m.db.scalar('SELECT command FROM runs')).toBe('compile');
  });

  it('docs generate is compile-only too (command read from invocation_command when which is absent)', async () => {
    const doc = runResults({ which: 'generate', results: [{ id: 'test.p.t.1', status: 'success', at: [1, 2] }] });
    (doc.args as Record<string, unknown>) = { invocation_command: 'dbt docs generate --static' };
    const m = await migrate(doc);
    expect(outcomes(m)).toEqual({ 'test.p.t.1': 'success/-/-' });
  });

  it('with --manifest, each skip names its nearest failed ancestor; a cascade leads to the root failure', async () => {
    const edges = {
      'model.p.a': [], 'model.p.b': [], 'test.p.t_b.1': ['model.p.b'],
      'model.p.c': ['model.p.a'], 'model.p.d': ['model.p.c'], 'model.p.e': ['model.p.b'], 'model.p.f': ['model.p.d', 'model.p.e'],
    };
    const m = await migrate(runResults({
      results: [
        { id: 'model.p.a', status: 'error', message: 'boom', at: [1, 2] },
        { id: 'model.p.b', status: 'success', at: [1, 2] },
        { id: 'test.p.t_b.1', status: 'fail', failures: 2, at: [2, 3] },
        { id: 'model.p.c', status: 'skipped' },
        { id: 'model.p.d', status: 'skipped' },
        { id: 'model.p.e', status: 'skipped' },
        { id: 'model.p.f', status: 'skipped' },
      ],
    }), manifest(edges));
    const up = Object.fromEntries([...m.nodes].filter(([, r]) => r.node_outcome === 'skipped').map(([id, r]) => [id, r.upstream_unique_id]));
    // e depends on b, whose test failed (dbt build skips the children of a model whose test failed):
    // the test is e's upstream; f is nearer to that test (via e, b) than to a (via d, c).
    expect(up).toEqual({ 'model.p.c': 'model.p.a', 'model.p.d': 'model.p.a', 'model.p.e': 'test.p.t_b.1', 'model.p.f': 'test.p.t_b.1' });
    expect(m.report.upstreamUnknown).toBe(0);
    expect(m.report.files[0]!.manifest.path).toBeDefined();
  });

  it('without --manifest and with two failures the upstream ids stay unknown and the report says so', async () => {
    const m = await migrate(runResults({
      results: [
        { id: 'model.p.a', status: 'error', at: [1, 2] },
        { id: 'model.p.b', status: 'error', at: [1, 2] },
        { id: 'model.p.c', status: 'skipped' },
      ],
    }));
    expect(m.nodes.get('model.p.c')!.upstream_unique_id).toBeNull();
    expect(m.report.upstreamUnknown).toBe(1);
  });

  it('a manifest of another project (none of the run\'s nodes in it) is not used, and the report says so', async () => {
    const doc = runResults({ results: [{ id: 'model.p.a', status: 'error', at: [1, 2] }, { id: 'model.p.c', status: 'skipped' }] });
    const other = manifest({ 'model.other.x': [], 'model.other.y': ['model.other.x'] });
    const m = await migrate(doc, other);
    // read as without a manifest: the run's only failure is the upstream of its skip
    expect(m.nodes.get('model.p.c')!.upstream_unique_id).toBe('model.p.a');
    expect(m.report.upstreamUnknown).toBe(0);
    expect(renderMigrateReport(m.report)).toMatch(/with --manifest \S+manifest\.json, which has none of the run's 2 nodes \(the manifest of another project\?\): not used/);
    // the project's manifest, stale (a node added since): used where it has the node, as if absent elsewhere
    const stale = await migrate(
      runResults({ results: [{ id: 'model.p.a', status: 'error', at: [1, 2] }, { id: 'model.p.b', status: 'skipped' }, { id: 'model.p.new', status: 'skipped' }] }),
      manifest({ 'model.p.a': [], 'model.p.b': ['model.p.a'] }),
    );
    expect([stale.nodes.get('model.p.b')!.upstream_unique_id, stale.nodes.get('model.p.new')!.upstream_unique_id]).toEqual(['model.p.a', 'model.p.a']);
    expect(renderMigrateReport(stale.report)).not.toMatch(/not used/);
  });

  it('an ephemeral compile error names the ephemeral model in the skip message', async () => {
    const m = await migrate(runResults({
      results: [
        { id: 'model.p.x', status: 'error', at: [1, 2] },
        { id: 'model.p.c', status: 'skipped', message: 'Compilation Error in model.p.c, caused by compilation error in referenced ephemeral model model.p.eph' },
      ],
    }));
    expect(m.nodes.get('model.p.c')!.upstream_unique_id).toBe('model.p.eph');
  });

  it('a compile error (only the compile timing) errors in the render phase', async () => {
    const m = await migrate(runResults({ results: [{ id: 'model.p.bad', status: 'error', message: 'Compilation Error', at: [1, 1.5], compileOnly: true }] }));
    expect(await m.db.all(`SELECT phase, node_outcome FROM nodes WHERE kind = 'evaluated'`)).toEqual([{ phase: 'render', node_outcome: 'error' }]);
  });

  it('reads every schema version leniently: v1 without failures, unknown fields, missing invocation id', () => {
    const doc = runResults({ schema: 1, version: '0.19.0', results: [{ id: 'model.p.a', status: 'success', at: [1, 2] }], startedAt: false });
    const r0 = (doc.results as Record<string, unknown>[])[0]!;
    delete r0.failures;
    r0.some_future_field = { x: 1 };
    (doc.metadata as Record<string, unknown>).invocation_id = null;
    const run = parseRunResults(doc, 'x.json');
    expect(run.schemaVersion).toBe(1);
    expect(run.results[0]!.failures).toBeNull();
    expect(run.invocationId).toBeNull();
    expect(run.startedAt).toBeNull();
  });

  it('a failed or warned test without a count (failures null) has failing_rows NULL, not 0; a count of 0 stays 0', async () => {
    const doc = runResults({
      results: [
        { id: 'test.p.failed_unknown.1', status: 'fail', failures: null, message: 'Got results', at: [1, 2] },
        { id: 'test.p.warned_unknown.1', status: 'warn', failures: null, at: [1, 2] },
        { id: 'test.p.failed_zero.1', status: 'fail', failures: 0, message: 'Got 0 results, configured to fail if < 5', at: [1, 2] },
        { id: 'test.p.passed.1', status: 'pass', failures: null, at: [1, 2] },
      ],
    });
    const m = await migrate(doc);
    const rows = Object.fromEntries([...m.nodes].map(([id, r]) => [id, r.failing_rows]));
    expect(rows).toEqual({ 'test.p.failed_unknown.1': null, 'test.p.warned_unknown.1': null, 'test.p.failed_zero.1': 0, 'test.p.passed.1': 0 });
    // the nodes relation (evaluations too) says the same
    expect(await m.db.all(`SELECT DISTINCT failing_rows FROM nodes WHERE unique_id = 'test.p.failed_unknown.1' AND test_outcome = 'failed'`)).toEqual([{ failing_rows: null }]);
    // and so does a Parquet translation, which keeps the mark in json_payload
    const pq = await migrateAndLoad([writeJson('run_results.json', doc)], { ext: 'parquet' });
    dbs.push(pq.db);
    expect(Object.fromEntries([...pq.nodes].map(([id, r]) => [id, r.failing_rows]))).toEqual(rows);
  });

  it("schema v1 (0.19): no failures key, a test's count is its integer message", async () => {
    const doc = runResults({
      schema: 1, version: '0.19.1', which: 'test', startedAt: false,
      results: [
        { id: 'test.p.failed.1', status: 'fail', at: [1, 2] },
        { id: 'test.p.warned.1', status: 'warn', at: [1, 2] },
        { id: 'test.p.passed.1', status: 'pass', at: [1, 2] },
        { id: 'test.p.no_count.1', status: 'fail', at: [1, 2] },
      ],
    });
    const messages = [7, 2, 0, null];
    (doc.results as Record<string, unknown>[]).forEach((r, i) => {
      delete r.failures;
      r.message = messages[i];
    });
    const run = parseRunResults(doc, 'x.json');
    expect(run.results.map((r) => [r.failures, r.message])).toEqual([[7, null], [2, null], [0, null], [null, null]]);
    const m = await migrate(doc);
    const rows = Object.fromEntries([...m.nodes].map(([id, r]) => [id, r.failing_rows]));
    expect(rows).toEqual({ 'test.p.failed.1': 7, 'test.p.warned.1': 2, 'test.p.passed.1': 0, 'test.p.no_count.1': null });
  });

  it('a file that does not give its command line has no raw_command; one that names no command has none either', async () => {
    const gen = await migrate(runResults({ which: 'generate', args: { invocation_command: undefined }, results: [{ id: 'model.p.a', status: 'success', at: [1, 2] }] }));
    expect(await gen.db.one('SELECT command, raw_command FROM runs')).toEqual({ command: 'generate', raw_command: null });
    const none = await migrate(runResults({ args: { which: undefined, invocation_command: undefined }, results: [{ id: 'model.p.a', status: 'success', at: [1, 2] }] }));
    expect(await none.db.one('SELECT command, raw_command FROM runs')).toEqual({ command: null, raw_command: null });
  });

  it('rejects a file that is not run_results, naming the field', () => {
    expect(() => parseRunResults({ metadata: {} }, 'bad.json')).toThrow(/bad\.json: results: missing results/);
    expect(() => parseRunResults({ results: [{ unique_id: 'model.p.a' }] }, 'bad.json')).toThrow(/results\[0\]\.status/);
  });

  it('a field of the wrong type is an input error naming the field and the node, not a default', () => {
    const parse = (edit: (doc: Record<string, unknown>, r: Record<string, unknown>) => void) => () => {
      const doc = runResults({ results: [{ id: 'model.p.a', status: 'success', at: [1, 2] }, { id: 'test.p.t', status: 'fail', failures: 5, at: [2, 3] }] });
      edit(doc, (doc.results as Record<string, unknown>[])[1]!);
      return parseRunResults(doc, 'rr.json');
    };
    expect(parse((d) => (d.elapsed_time = '3.73'))).toThrow(/^rr\.json: elapsed_time: must be a number, not the string "3\.73"$/);
    expect(parse((d) => ((d.metadata as Record<string, unknown>).generated_at = 'garbage'))).toThrow(/^rr\.json: metadata\.generated_at: must be an ISO 8601 timestamp, not "garbage"$/);
    expect(parse((_, r) => (r.execution_time = '1.95'))).toThrow(/^rr\.json: results\[1\]\.execution_time: test\.p\.t: must be a number, not the string "1\.95"$/);
    expect(parse((_, r) => (r.failures = '5'))).toThrow(/results\[1\]\.failures: test\.p\.t: must be a number/);
    expect(parse((_, r) => (r.adapter_response = { rows_affected: '2' }))).toThrow(/results\[1\]\.adapter_response\.rows_affected: test\.p\.t: must be a number/);
    expect(parse((_, r) => (r.timing = 'x'))).toThrow(/results\[1\]\.timing: test\.p\.t: must be a list/);
    expect(parse((_, r) => ((r.timing as Record<string, unknown>[])[0]!.started_at = 'yesterday'))).toThrow(/results\[1\]\.timing\[0\]\.started_at: test\.p\.t: must be an ISO 8601 timestamp, not "yesterday"/);
    // what real files hold still reads: null where the schema allows it, a timing without ends
    const ok = parse((d, r) => {
      r.failures = null;
      r.adapter_response = { rows_affected: null };
      (r.timing as Record<string, unknown>[])[0]!.started_at = null;
      delete (d.metadata as Record<string, unknown>).invocation_started_at;
    })();
    expect(ok.results[1]!.timing[0]!.start).toBeNull();
  });

  it('one node twice among the results is an input error naming both: a run has one result per node', () => {
    const doc = (ids: string[]) => ({ metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' }, results: ids.map((unique_id, i) => ({ unique_id, status: i === 0 ? 'error' : 'success' })) });
    expect(() => parseRunResults(doc(['model.p.a', 'model.p.b', 'model.p.a']), 'dup.json')).toThrow(/dup\.json: results\[2\]\.unique_id: model\.p\.a is also results\[0\]/);
    expect(parseRunResults(doc(['model.p.a', 'model.p.b']), 'ok.json').results).toHaveLength(2);
  });

  it('a malformed document names its line and column', () => {
    const f = writeJson('run_results.json', '{\n  "metadata": {},\n  "results": [{"status": "success",, "unique_id": "model.p.a"}]\n}\n');
    expect(() => readRunResults(f)).toThrow(/run_results\.json:3: not a readable run_results\.json: .* \(column 36\)$/);
  });

  it('an unknown status is an input error, not a silent success', async () => {
    await expect(migrate(runResults({ results: [{ id: 'model.p.a', status: 'exploded', at: [1, 2] }] }))).rejects.toThrow(/unknown run-results status "exploded"/);
  });

  it('a migrate that stops on bad input leaves no partial output (JSONL or Parquet): the file there stays as it was', async () => {
    const bad = writeJson('run_results.json', runResults({ results: [{ id: 'model.p.ok', status: 'success', at: [1, 2] }, { id: 'model.p.a', status: 'exploded', at: [1, 2] }] }));
    for (const ext of ['jsonl', 'parquet']) {
      const dir = tempDir('runlens-legacy-');
      const out = path.join(dir, `out.${ext}`);
      writeFileSync(out, 'an older output');
      await expect(migrateFiles([bad], { out })).rejects.toThrow(/results\[1\]\.status: unknown run-results status "exploded"/);
      expect(readFileSync(out, 'utf8')).toBe('an older output');
      expect(readdirSync(dir)).toEqual([`out.${ext}`]);
    }
  });
});
