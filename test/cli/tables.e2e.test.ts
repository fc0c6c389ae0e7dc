/** Tables fit the terminal: columns by priority, no separator lines; json and csv carry everything. */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const TWO = 'samples/two-runs.jsonl';
const FAILED = 'samples/failed-build.jsonl';
const lines = (s: string) => s.split('\n').filter(Boolean);
const BOX = /[─│┼┌┐└┘├┤┬┴]/;

describe('runs as a table', () => {
  it('fits 80 columns: one header line and one line per run, the trace id abbreviated, no borders', () => {
    const r = runCli(['runs', TWO], { env: { COLUMNS: '80' } });
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out).toHaveLength(3);
    for (const l of out) expect(l.length, l).toBeLessThanOrEqual(80);
    expect(r.stdout).not.toMatch(BOX);
    expect(out[0]).toMatch(/^trace_id +command +started_at .*error +tests_failed +failed$/);
    // newest first
    expect(out[2]).toMatch(/^019cadc69a80 +build +2026-03-02 09:00/);
    expect(out[2]).toContain('FAILED');
    expect(r.stderr).toMatch(/^runlens: left out to fit 80 columns: .*engine_version.* \(--format csv or json has every column\)\n$/);
  });

  it('shows more as the terminal widens, and everything when output is not a terminal', () => {
    const wide = lines(runCli(['runs', TWO], { env: { COLUMNS: '200' } }).stdout);
    for (const l of wide) expect(l.length).toBeLessThanOrEqual(200);
    expect(wide[0]).toContain('engine_version');
    expect(wide[2]).toContain('019cadc69a807cfa896ce3e6f5472743');
    const piped = runCli(['runs', TWO]);
    expect(piped.stderr).toBe('');
    expect(lines(piped.stdout)[0]!.split(/ {2,}/)).toEqual([
      'trace_id', 'command', 'started_at', 'duration_s', 'nodes', 'success', 'error', 'skipped', 'canceled',
      'tests_passed', 'tests_warned', 'tests_failed', 'failed', 'engine_version', 'ended',
    ]);
  });

  it('--format csv and json are unchanged by the width', () => {
    const csv = runCli(['runs', TWO, '--format', 'csv'], { env: { COLUMNS: '40' } }).stdout;
    expect(lines(csv)[0]).toMatch(/^trace_id,invocation_id,command,raw_command,started_at,duration_s,nodes,success,error,skipped,canceled,tests_passed,tests_warned,tests_failed,failed,engine_version,ended,spans,files$/);
    expect(lines(csv)[2]).toMatch(/^019cadc69a807cfa896ce3e6f5472743,019cadc6-9a80-7cfa-896c-e3e6f5472743,build,dbt build,2026-03-02T09:00:00.000Z,10.616,36,20,1,15,0,8,0,1,true,2.0.0-preview.120,true,\d+,/);
    const json = JSON.parse(runCli(['runs', TWO, '--format', 'json'], { env: { COLUMNS: '40' } }).stdout) as Record<string, unknown>[];
    expect(json[1]).toMatchObject({ trace_id: '019cadc69a807cfa896ce3e6f5472743', started_at: '2026-03-02T09:00:00.000Z', failed: true, engine_version: '2.0.0-preview.120' });
    // both carry every column (docs/cli.md)
    expect(lines(csv)[0]!.split(',')).toEqual(Object.keys(json[0]!));
  });
});

describe('query results and the list of queries', () => {
  it('a saved query fits 80 columns, long text cut with …', () => {
    const r = runCli(['query', 'errors', FAILED], { env: { COLUMNS: '80' } });
    expect(r.code).toBe(0);
    for (const l of lines(r.stdout)) expect(l.length, l).toBeLessThanOrEqual(80);
    expect(r.stdout).not.toMatch(BOX);
    expect(lines(r.stdout)).toHaveLength(3);
    expect(r.stdout).toContain('…');
  });

  it('queries shows every parameter in full, one per line', () => {
    const r = runCli(['queries'], { env: { COLUMNS: '80' } });
    expect(r.code).toBe(0);
    for (const l of lines(r.stdout)) expect(l.length, l).toBeLessThanOrEqual(80);
    for (const p of ["--param base=''", "--param head=''", '--param threshold=50', '--param min_ms=0', '--param limit=10'])
      expect(r.stdout).toContain(p);
    expect(r.stdout.replace(/\n\s+/g, ' ')).toContain('the run compared from (trace id, invocation id or prefix); empty = the run that started just before head');
    expect(lines(runCli(['queries', '--format', 'csv']).stdout)[0]).toBe('name,summary,parameters');
  });
});

describe('free SQL results as they are', () => {
  it('two columns of one name keep their own values in csv, table and json (the second named name:1)', () => {
    const sql = `SELECT r.duration_ms, n.duration_ms, n.unique_id FROM runs r JOIN node_results n USING (trace_id) ORDER BY n.unique_id LIMIT 3`;
    const json = JSON.parse(runCli(['query', '--sql', sql, TWO, '--format', 'json']).stdout) as Record<string, unknown>[];
    expect(json[0]!['duration_ms']).not.toEqual(json[0]!['duration_ms:1']);
    const csv = lines(runCli(['query', '--sql', sql, TWO, '--format', 'csv']).stdout);
    expect(csv[0]).toBe('duration_ms,duration_ms:1,unique_id');
    expect(csv[1]).toBe(`${json[0]!['duration_ms']},${json[0]!['duration_ms:1']},${json[0]!['unique_id']}`);
    const table = lines(runCli(['query', '--sql', sql, TWO]).stdout);
    expect(table[1]!.trim().split(/ +/).slice(0, 2)).toEqual([String(json[0]!['duration_ms']), String(json[0]!['duration_ms:1'])]);
  });

  it('csv tells NULL (nothing) from the empty string ("")', () => {
    const r = runCli(['query', '--sql', `SELECT NULL::VARCHAR AS a, '' AS b, 'x' AS c`, TWO, '--format', 'csv']);
    expect(lines(r.stdout)).toEqual(['a,b,c', ',"",x']);
  });

  it('--param NAME=VALUE is the value of $NAME in --sql; a parameter the SQL does not take is exit 2', () => {
    const all = JSON.parse(runCli(['query', '--sql', 'SELECT trace_id FROM runs ORDER BY 1', TWO, '--format', 'json']).stdout) as { trace_id: string }[];
    expect(all).toHaveLength(2);
    const one = runCli(['query', '--sql', 'SELECT trace_id FROM runs WHERE trace_id = $trace', TWO, '--param', `trace=${all[1]!.trace_id}`, '--format', 'json']);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual([all[1]]);
    const extra = runCli(['query', '--sql', 'SELECT trace_id FROM runs', TWO, '--param', 'bogus=1']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('no parameter $bogus');
  });

  it('--param with --sql binds the value given, whatever its name: trace, base, head and until are no run ids there', () => {
    const prefix = (JSON.parse(runCli(['query', '--sql', 'SELECT trace_id FROM runs ORDER BY 1', TWO, '--format', 'json']).stdout) as { trace_id: string }[])[0]!.trace_id.slice(0, 8);
    const until = runCli(['query', '--sql', 'SELECT count(*)::INTEGER AS n FROM runs WHERE start_ns < epoch_ns($until::TIMESTAMP)', TWO, '--param', 'until=2000-01-01', '--format', 'json']);
    expect(until.stderr).toBe('');
    expect(until.code).toBe(0);
    expect(JSON.parse(until.stdout)).toEqual([{ n: 0 }]);
    for (const name of ['trace', 'base', 'head', 'until']) {
      const r = runCli(['query', '--sql', `SELECT $${name} AS v`, TWO, '--param', `${name}=${prefix}`, '--format', 'json']);
      expect(r.stderr, name).toBe('');
      expect(JSON.parse(r.stdout), name).toEqual([{ v: prefix }]);
      // no run of that name is needed either
      expect(JSON.parse(runCli(['query', '--sql', `SELECT $${name} AS v`, TWO, '--param', `${name}=zzz`, '--format', 'json']).stdout), name).toEqual([{ v: 'zzz' }]);
    }
    const unused = runCli(['query', '--sql', 'SELECT 1 AS one', TWO, '--param', 'trace=zzz']);
    expect(unused.code).toBe(2);
    expect(unused.stderr).toContain('the SQL has no parameter $trace');
  });
});
