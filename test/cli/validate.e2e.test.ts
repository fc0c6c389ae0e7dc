/** validate takes files, folders and globs like the other commands, lists at most N violations per file, and says once that a file is not telemetry. */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir();

describe('validate PATHs', () => {
  it('takes a folder: every telemetry file in it', () => {
    const r = runCli(['validate', 'samples']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\n6 files, [\d,]+ records: 0 violations, 0 warnings\n$/);
    // the older engine's files in the folder are not telemetry: each said once, none validated
    for (const f of ['logs/dbt.log', 'target/run_results.json', 'target/sources.json', 'target/manifest.json'])
      expect(r.stderr).toContain(`runlens: samples/older-engine/${f}: skipped: an older-engine file`);
  });

  it('refuses an older-engine file named alone, saying what reads it', () => {
    const r = runCli(['validate', 'samples/older-engine/target/run_results.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/run_results\.json: .*not telemetry.*migrate/);
  });

  it('takes a glob', () => {
    const r = runCli(['validate', 'samples/*.parquet']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^3 files, /);
  });

  it('counts agree with their nouns', () => {
    const one = path.join(dir, 'one.jsonl');
    writeFileSync(one, readFileSync('samples/clean-build.jsonl', 'utf8').split('\n')[0] + '\n');
    const r = runCli(['validate', one]);
    expect(r.stderr).toMatch(/^1 file, 1 record: 0 violations, 1 warning\n$/);
  });
});

describe('validate on bad input', () => {
  it('counts the records it read, as a load does: a line that is not a JSON object is a violation, not a record', () => {
    const lines = readFileSync('samples/clean-build.jsonl', 'utf8').trimEnd().split('\n');
    const cut = path.join(dir, 'not-records.jsonl');
    // a line cut short, and JSON values that are not objects
    writeFileSync(cut, [...lines.slice(0, 10), '5', '[1]', ...lines.slice(10), lines[0]!.slice(0, -50)].join('\n'));
    const load = runCli(['load', cut, '--lenient']);
    expect(load.code, load.stderr).toBe(0);
    expect(load.stdout).toContain(`${lines.length} records, 1 trace, 3 lines skipped`);
    const text = runCli(['validate', cut]);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(new RegExp(`^1 file, ${lines.length.toLocaleString('en-US')} records: 3 violations`));
    const json = runCli(['validate', cut, '--format', 'json']);
    const report = JSON.parse(json.stdout) as { files: { records: number; violations: number }[] };
    expect(report.files[0]).toMatchObject({ records: lines.length, violations: 3 });
  });

  it('lists 100 violations per file and counts the rest; --max-violations changes the limit', () => {
    const bad = path.join(dir, 'bad.jsonl');
    writeFileSync(bad, Array.from({ length: 250 }, () => '{"record_type":"Nope"}').join('\n') + '\n');
    const r = runCli(['validate', bad]);
    expect(r.code).toBe(1);
    const listed = r.stdout.split('\n').filter((l) => l.startsWith(`${bad}:`));
    expect(listed).toHaveLength(100);
    expect(r.stdout).toContain(`... and 150 more violations in ${bad} (--max-violations to list more)`);
    expect(r.stderr).toContain('250 violations');
    const five = runCli(['validate', bad, '--max-violations', '5']);
    expect(five.stdout.split('\n').filter((l) => l.startsWith(`${bad}:`))).toHaveLength(5);
    expect(five.stdout).toContain('... and 245 more violations');
  });

  it('a file that is not telemetry at all is said once, exit 2', () => {
    const png = path.join(dir, 'picture.jsonl');
    writeFileSync(png, Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(5000, 0x41), Buffer.from('\n\n\n'), Buffer.alloc(3000, 0x0a)]));
    const r = runCli(['validate', png]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${png}:1: not JSONL telemetry`);
  });

  it('a first line that is not a JSON object is a bad line like any other: load names it, --lenient skips it, validate lists it', () => {
    const clean = readFileSync('samples/clean-build.jsonl', 'utf8');
    for (const [name, line] of [['garbage', 'garbage'], ['array', '[1,2]'], ['string', '"just a string"']]) {
      const file = path.join(dir, `first-${name}.jsonl`);
      writeFileSync(file, `${line}\n${clean}`);
      const strict = runCli(['load', file]);
      expect(strict.code, name).toBe(2);
      expect(strict.stderr, name).toContain(`${file}:1: `);
      expect(strict.stderr, name).not.toContain('not JSONL telemetry');
      const lenient = runCli(['load', '--lenient', file]);
      expect(lenient.code, name).toBe(0);
      expect(lenient.stdout, name).toContain('557 records');
      expect(lenient.stderr, name).toContain(`${file}:1: `);
      const v = runCli(['validate', file]);
      expect(v.code, name).toBe(1);
      expect(v.stdout, name).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1: `, 'm'));
      expect(v.stderr, name).toContain('557 records: 1 violation');
    }
    // a file that is not telemetry, after blank lines: its first line that is not blank is named
    const late = path.join(dir, 'blank-then-garbage.jsonl');
    writeFileSync(late, '\n  \ngarbage\n');
    const r = runCli(['validate', late]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${late}:3: not JSONL telemetry`);
  });

  it('a truncated or fake Parquet file is named without DuckDB internals, by every command', () => {
    const whole = readFileSync('samples/clean-build.parquet');
    const cut = path.join(dir, 'cut.parquet');
    writeFileSync(cut, whole.subarray(0, 3000));
    const fake = path.join(dir, 'fake.parquet');
    writeFileSync(fake, Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(4000, 7), Buffer.from('PAR1')]));
    for (const file of [cut, fake])
      for (const cmd of ['validate', 'runs', 'gate']) {
        const r = runCli([cmd, file]);
        expect(r.code, `${cmd} ${file}`).toBe(2);
        expect(r.stderr, `${cmd} ${file}`).toMatch(new RegExp(`^runlens: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
        expect(r.stderr, `${cmd} ${file}`).not.toMatch(/LINE \d|SELECT|read_parquet|Error:/);
        expect(r.stderr.trim().split('\n'), `${cmd} ${file}`).toHaveLength(1);
      }
    copyFileSync('samples/clean-build.parquet', path.join(dir, 'whole.parquet'));
    expect(runCli(['validate', path.join(dir, 'whole.parquet')]).code).toBe(0);
  });
});

describe('validate: every PATH holds telemetry', () => {
  it('a folder or glob of older-engine files only is exit 2 naming it, as the file named alone is', () => {
    const target = path.join(dir, 'legacy-only');
    mkdirSync(target, { recursive: true });
    copyFileSync('../shared/samples/legacy-dbt-core/rr_v5_1.7.0_build.json', path.join(target, 'run_results.json'));
    for (const arg of [target, '../shared/samples/legacy-dbt-core/*.json']) {
      const r = runCli(['validate', arg]);
      expect(r.code, arg).toBe(2);
      expect(r.stderr, arg).toContain(`runlens: ${arg}: no telemetry in this input:`);
      expect(r.stderr, arg).toMatch(/migrate/);
    }
    // beside a PATH that holds telemetry, too
    const both = runCli(['validate', 'samples/clean-build.jsonl', target]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain(`runlens: ${target}: no telemetry in this input: its one file holds no telemetry`);
  });

  it('an empty file is exit 2 naming it: a conformance check of nothing must not pass', () => {
    const empty = path.join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const r = runCli(['validate', 'samples/clean-build.jsonl', empty]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toContain(`runlens: ${empty}: no telemetry in this input: the file holds no telemetry record`);
  });
});
