/**
 * Reading never writes (DESIGN.md): commands other than `load` and `receive` open a --db model
 * read-only and refuse a path that is not an existing runlens model.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import { openModelToRead } from '../../src/store/open.js';
import { TABLES } from '../../src/store/schema.js';
import { CLI, runCli, runCliWithFileLimit, startCli, until } from '../helpers/cli.js';
import { interfaceStyleRun, tempDir, writeLines } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

const dir = tempDir();
const CLEAN = path.join(ROOT, 'samples/clean-build.jsonl');
const FAILED = path.join(ROOT, 'samples/failed-build.jsonl');

function model(name: string, files: string[]): string {
  const db = path.join(dir, name);
  const r = runCli(['load', ...files, '--db', db]);
  expect(r.code, r.stderr).toBe(0);
  return db;
}

const runCount = (db: string) => JSON.parse(runCli(['query', '--sql', 'SELECT count(*)::INT AS n FROM runs', '--db', db, '--format', 'json']).stdout)[0].n;

describe('reading never writes', () => {
  it('query --sql cannot change a --db model: a writing statement is exit 2 and says the model is read-only', () => {
    const db = model('ro.duckdb', [CLEAN]);
    const before = readFileSync(db);
    for (const sql of ['DELETE FROM runs', 'DROP VIEW spans', "INSERT INTO files (file_id, path) VALUES (99, 'x')", 'CREATE TABLE t (x INT)']) {
      const r = runCli(['query', '--sql', sql, '--db', db]);
      expect(r.code, sql).toBe(2);
      expect(r.stderr, sql).toMatch(/read-only/);
      expect(r.stderr).not.toContain('internal error');
    }
    expect(runCount(db)).toBe(1);
    expect(readFileSync(db).equals(before)).toBe(true);
  });

  it('query --sql only reads, whatever the model is read through: no file written, no model changed, no write taken and dropped', () => {
    const db = model('files.duckdb', [CLEAN]);
    const before = readFileSync(db);
    const input = path.join(dir, 'input.jsonl');
    writeFileSync(input, readFileSync(CLEAN));
    const out = path.join(dir, 'out.csv');
    const statements = [
      `COPY (SELECT 1 AS a) TO '${db}' (FORMAT csv)`,
      `COPY (SELECT 1 AS a) TO '${input}' (FORMAT csv)`,
      `EXPORT DATABASE '${path.join(dir, 'export')}'`,
      `ATTACH '${path.join(dir, 'new.duckdb')}' AS w (READ_WRITE)`,
      `ATTACH '${db}' AS w; DELETE FROM w.record_rows; DETACH w; SELECT 'ok' AS done`,
      "PRAGMA threads = 1",
      'SELECT 1; DELETE FROM record_rows',
      'DELETE FROM record_rows',
      'SET threads = 1',
      'CHECKPOINT',
    ];
    // the model opened read-only, read into memory beside more PATHs, and plain files without --db
    for (const where of [['--db', db], ['--db', db, FAILED], [input]]) {
      for (const sql of statements) {
        const r = runCli(['query', '--sql', sql, ...where]);
        expect(r.code, `${sql} ${where.join(' ')}`).toBe(2);
        expect(r.stderr, sql).toMatch(/only reads/);
      }
    }
    expect(existsSync(path.join(dir, 'new.duckdb'))).toBe(false);
    expect(existsSync(path.join(dir, 'export'))).toBe(false);
    expect(existsSync(out)).toBe(false);
    expect(readFileSync(input).equals(readFileSync(CLEAN))).toBe(true);
    expect(readFileSync(db).equals(before)).toBe(true);
    // what reads still works: SELECT, DESCRIBE, SHOW, SUMMARIZE, FROM first
    for (const sql of ['SELECT count(*) FROM runs', 'DESCRIBE runs', 'SHOW TABLES', 'SUMMARIZE runs', "FROM pragma_table_info('runs')", 'SELECT 1;']) {
      const r = runCli(['query', '--sql', sql, '--db', db, '--format', 'json']);
      expect(r.code, `${sql}: ${r.stderr}`).toBe(0);
    }
  }, 180_000);

  it('query --sql runs one statement: more is exit 2, not the first result alone', () => {
    const r = runCli(['query', '--sql', 'SELECT 1 AS a; SELECT 2 AS b', CLEAN]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('runs one statement');
  });

  it('a data file as --db (Parquet, JSONL, JSON: DuckDB reads it in memory) is exit 2 "not a runlens model", for load too, and stays as it was', () => {
    for (const name of ['two-runs.parquet', 'two-runs.jsonl']) {
      const file = path.join(dir, `as-db-${name}`);
      writeFileSync(file, readFileSync(path.join(ROOT, 'samples', name)));
      const before = readFileSync(file);
      for (const args of [['load', CLEAN], ['runs'], ['gate']]) {
        const r = runCli([...args, '--db', file]);
        expect(r.code, `${args.join(' ')} --db ${name}`).toBe(2);
        expect(r.stderr).toContain(`${file}: not a runlens model`);
      }
      expect(readFileSync(file).equals(before)).toBe(true);
    }
  });

  it(`a SQLite database as --db (as the service's store) is "not a runlens model": no extension is fetched or loaded to open it, and it stays as it was`, () => {
    const file = path.join(dir, 'store.sqlite');
    const lite = new Database(file);
    lite.exec("CREATE TABLE subscriptions (hmac_secret TEXT); INSERT INTO subscriptions VALUES ('whsec_secret')");
    lite.close();
    const before = readFileSync(file);
    for (const args of [['load', CLEAN], ['runs'], ['query', '--sql', 'SELECT * FROM subscriptions']]) {
      const r = runCli([...args, '--db', file]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`${file}: not a runlens model`);
      expect(r.stderr).not.toMatch(/extension|download|whsec/i);
    }
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('load --db :memory: is refused: it would say a model was saved and write nothing', () => {
    const r = runCli(['load', CLEAN, '--db', ':memory:']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--db.*file/);
  });

  it('a missing --db is exit 2 "no such model" and creates no file, for every reading command', () => {
    const missing = path.join(dir, 'nope.duckdb');
    for (const args of [['runs'], ['tree'], ['query', 'errors'], ['gate'], ['query', '--sql', 'SELECT 1']]) {
      const r = runCli([...args, '--db', missing]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`${missing}: no such model`);
      expect(existsSync(missing)).toBe(false);
      expect(existsSync(`${missing}.wal`)).toBe(false);
    }
  });

  it('a file that is not a runlens model is exit 2, whether DuckDB or not, and `load` does not make it one', async () => {
    const other = path.join(dir, 'other.duckdb');
    const inst = await DuckDBInstance.create(other);
    const c = await inst.connect();
    await c.run('CREATE TABLE orders (id INTEGER)');
    c.closeSync();
    inst.closeSync();
    const text = path.join(dir, 'notes.duckdb');
    writeFileSync(text, 'not a database\n'.repeat(500));
    for (const f of [other, text]) {
      const size = statSync(f).size;
      for (const args of [['runs', '--db', f], ['gate', '--db', f], ['load', CLEAN, '--db', f]]) {
        const r = runCli(args);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr, args.join(' ')).toContain(`${f}: not a runlens model`);
      }
      expect(statSync(f).size).toBe(size);
    }
  });

  it('PATHs beside --db are read with the model in memory; the --db file is not changed', () => {
    const db = model('beside.duckdb', [CLEAN]);
    const before = readFileSync(db);
    const r = runCli(['runs', FAILED, '--db', db, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as unknown[]).length).toBe(2);
    const gate = runCli(['gate', FAILED, '--db', db]);
    expect(gate.code).toBe(1);
    expect(runCount(db)).toBe(1);
    expect(readFileSync(db).equals(before)).toBe(true);
  });

  it('a model of an older schema is read as the current model without being rewritten', async () => {
    const file = path.join(dir, 'old.duckdb');
    const w = await openModel(file);
    await loadPaths(w, [writeLines(dir, 'old.jsonl', interfaceStyleRun())]);
    const want = await w.all('SELECT span_id, kind, depth, ended FROM spans ORDER BY span_id');
    const results = await w.all('SELECT unique_id, node_outcome FROM node_results ORDER BY unique_id');
    // schema 2 kept node_results as a table
    await w.run('DROP VIEW node_results');
    await w.run('CREATE TABLE node_results AS SELECT 1 AS stale');
    await w.run(`UPDATE runlens_meta SET value = '2' WHERE key = 'schema_version'`);
    w.close();
    const before = readFileSync(file);
    const r = await openModelToRead(file);
    try {
      expect(await r.all('SELECT span_id, kind, depth, ended FROM spans ORDER BY span_id')).toEqual(want);
      expect(await r.all('SELECT unique_id, node_outcome FROM node_results ORDER BY unique_id')).toEqual(results);
      expect(await r.scalar('SELECT count(*)::INT FROM records WHERE line IS NULL')).toBe(0);
    } finally {
      r.close();
    }
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('a model held by a running receive answers a reader with what to do, not a lock error', async () => {
    const db = path.join(dir, 'live.duckdb');
    const rx = startCli(['receive', '--port', '0', '--db', db]);
    try {
      await until(() => /receiving OTLP/.test(rx.stderr()), rx);
      expect(rx.stderr()).toMatch(/receiving OTLP/);
      for (const args of [['runs', '--db', db], ['query', 'errors', '--db', db], ['load', CLEAN, '--db', db]]) {
        const r = runCli(args);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr).toContain(`${db}: the model is in use by another process`);
        expect(r.stderr).toContain('runlens explore --receive');
        expect(r.stderr).not.toMatch(/internal error|Could not set lock/);
      }
    } finally {
      rx.kill('SIGTERM');
      await rx.done;
    }
  });
});

describe('a --db load that stops before its end', () => {
  it('the files it committed are derived: their runs are in the model and the gate judges them', () => {
    const dir = tempDir();
    const db = path.join(dir, 'm.duckdb');
    // a run that never ended, then a file the load refuses
    const run = interfaceStyleRun();
    const cut = writeLines(dir, 'cut.jsonl', [run[0]!, ...run.slice(2, 6)]); // without the invocation's SpanEnd
    const bad = path.join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"record_type": bad\n');
    expect(runCli(['load', cut, bad, '--db', db]).code).toBe(2);
    const runs = JSON.parse(runCli(['runs', '--db', db, '--format', 'json']).stdout) as { ended: boolean }[];
    expect(runs.map((r) => r.ended)).toEqual([false]);
    expect(runCli(['gate', '--db', db]).code).toBe(1);
    // loading it again finds it present, and the model still has its run
    expect(runCli(['load', cut, '--db', db]).code).toBe(0);
    expect(runCli(['gate', '--db', db]).code).toBe(1);
  });

  it('a file committed but not yet finished (a kill after its commit) is finished when the model is opened', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'm.duckdb');
    const input = writeLines(dir, 'run.jsonl', interfaceStyleRun());
    const w = await openModel(file);
    await loadPaths(w, [input]);
    const lines = await w.all('SELECT line, span_id FROM records ORDER BY line');
    const runs = await w.all('SELECT * FROM runs');
    // what a kill between a file's commit and the steps after it leaves: no run, the row ids of its transaction
    await w.run('DELETE FROM runs');
    await w.run('UPDATE files SET first_row = first_row + 36028797018960000');
    await w.run('INSERT INTO load_pending SELECT file_id FROM files');
    w.close();
    for (const open of [(f: string) => openModelToRead(f), (f: string) => openModel(f)]) {
      const r = await open(file);
      try {
        expect(await r.all('SELECT line, span_id FROM records ORDER BY line')).toEqual(lines);
        expect(await r.all('SELECT * FROM runs')).toEqual(runs);
      } finally {
        r.close();
      }
    }
  });
});

describe('a --db load that cannot write the model (a full disk; here a file size limit, which fails a write the same way)', () => {
  it('is exit 2 naming the model, and a reader then says the load did not finish instead of answering from what it left', () => {
    const dir = tempDir();
    expect(runCli(['generate', '-o', 'big.jsonl', '--nodes', '5', '--runs', '300', '--no-detail'], { cwd: dir }).code).toBe(0);
    const r = runCliWithFileLimit(2048, ['load', 'big.jsonl', '--db', 'm.duckdb'], { cwd: dir });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^runlens: m\.duckdb: not written \(file too large\)/);
    expect(r.stderr).not.toContain('internal error');
    for (const cmd of [['runs'], ['gate']]) {
      const read = runCli([...cmd, '--db', 'm.duckdb'], { cwd: dir });
      expect(read.code, cmd[0]).toBe(2);
      expect(read.stderr, cmd[0]).toContain('m.duckdb: a load into the model did not finish (load big.jsonl)');
    }
    // another load does not make the model whole: it still lacks what the unfinished load was given
    expect(runCli(['load', CLEAN, '--db', 'm.duckdb'], { cwd: dir }).code).toBe(0);
    const still = runCli(['gate', '--db', 'm.duckdb'], { cwd: dir });
    expect(still.code, still.stdout).toBe(2);
    expect(still.stderr).toContain('m.duckdb: a load into the model did not finish (load big.jsonl)');
    // loaded again where there is room, the model is whole and read again
    expect(runCli(['load', 'big.jsonl', '--db', 'm.duckdb'], { cwd: dir }).code).toBe(0);
    expect(JSON.parse(runCli(['runs', '--db', 'm.duckdb', '--format', 'json'], { cwd: dir }).stdout)).toHaveLength(301);
  });

  it('names the load to run again as a command that a shell runs as it is, quoting paths with spaces or quotes', () => {
    const dir = tempDir();
    expect(runCli(['generate', '-o', "Bob's run.jsonl", '--nodes', '5', '--runs', '300', '--no-detail'], { cwd: dir }).code).toBe(0);
    expect(runCliWithFileLimit(2048, ['load', "Bob's run.jsonl", '--db', 'my model.duckdb'], { cwd: dir }).code).toBe(2);
    const read = runCli(['gate', '--db', 'my model.duckdb'], { cwd: dir });
    expect(read.code).toBe(2);
    const again = /run the load again \(`runlens (.*)`\)/.exec(read.stderr)?.[1];
    expect(again, read.stderr).toBe(`load 'Bob'\\''s run.jsonl' --db 'my model.duckdb'`);
    // a load that can never complete (a file of it damaged for good) must not leave the model refused without a way out
    expect(read.stderr).toMatch(/if it cannot complete \(a file it was given is damaged\), make the model again: remove my model\.duckdb and load what it should hold/);
    // the shell hands the suggested command's words over as they were given
    const sh = spawnSync('sh', ['-c', `"$0" "$1" ${again}`, process.execPath, CLI], { cwd: dir, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
    expect(sh.status, sh.stderr).toBe(0);
    expect(JSON.parse(runCli(['runs', '--db', 'my model.duckdb', '--format', 'json'], { cwd: dir }).stdout)).toHaveLength(300);
  });
});

describe('a --db model whose creation was interrupted', () => {
  /** What a first load stopped while it made the model's tables one by one left: the first tables, runlens_meta empty. */
  async function halfMade(name: string): Promise<string> {
    const file = path.join(dir, name);
    const inst = await DuckDBInstance.create(file);
    const c = await inst.connect();
    for (const ddl of TABLES.slice(0, 2)) await c.run(ddl);
    c.closeSync();
    inst.closeSync();
    return file;
  }

  it('is finished by the next load, and reading it before says what happened', async () => {
    const db = await halfMade('half-made.duckdb');
    const read = runCli(['runs', '--db', db]);
    expect(read.code).toBe(2);
    expect(read.stderr).toContain(`${db}: the model was not finished`);
    const load = runCli(['load', CLEAN, '--db', db]);
    expect(load.stderr).toBe('');
    expect(load.code).toBe(0);
    expect(runCount(db)).toBe(1);
    // its records were read by this runlens: nothing to warn of
    const after = runCli(['runs', '--db', db]);
    expect(after.code).toBe(0);
    expect(after.stderr).toBe('');
  });
});

describe('a damaged --db model', () => {
  it('is exit 2 naming the model file, never an internal error or a passing gate on what could not be read', async () => {
    const { runInProcess } = await import('../helpers/in-process.js');
    const { copyFileSync, openSync, readSync, writeSync, closeSync } = await import('node:fs');
    const good = path.join(dir, 'damage-me.duckdb');
    expect(runCli(['load', FAILED, '--db', good]).code).toBe(0);
    const size = statSync(good).size;
    const damaged = path.join(dir, 'damaged.duckdb');
    const seen = new Set<number>();
    // four bytes flipped in turn at each 128 KiB step: some land in blocks the gate reads
    for (let at = 16_384; at < size; at += 131_072) {
      copyFileSync(good, damaged);
      const fd = openSync(damaged, 'r+');
      const b = Buffer.alloc(4);
      readSync(fd, b, 0, 4, at);
      writeSync(fd, b.map((x) => x ^ 0xff), 0, 4, at);
      closeSync(fd);
      const r = await runInProcess(['gate', '--db', damaged]);
      seen.add(r.code);
      expect(r.stderr, `bytes flipped at ${at}`).not.toContain('internal error');
      if (r.code === 2) expect(r.stderr, `bytes flipped at ${at}`).toContain(`${damaged}:`);
      // the run failed: a damaged model either still says so or is refused
      expect(r.code, `bytes flipped at ${at}: ${r.stdout}`).not.toBe(0);
    }
    expect([...seen].sort()).toEqual([1, 2]);
  }, 180_000);
});

describe('the marks of unfinished --db loads', () => {
  /** A mark as a killed load leaves it, written by hand: `key` as runlens writes it (the single key of earlier models by default). */
  async function mark(db: string, load: string, key = 'load_unfinished'): Promise<void> {
    const inst = await DuckDBInstance.create(db);
    const c = await inst.connect();
    await c.run(`INSERT OR REPLACE INTO runlens_meta VALUES ('${key}', '${load.replaceAll("'", "''")}')`);
    c.closeSync();
    inst.closeSync();
  }
  const unfinished = (db: string, cwd?: string) => runCli(['gate', '--db', db], { cwd });

  it("record the load's options: a killed `load --lenient` is suggested again with --lenient, and a load without it leaves the mark", () => {
    const dir = tempDir();
    expect(runCli(['generate', '-o', 'big.jsonl', '--nodes', '5', '--runs', '300', '--no-detail'], { cwd: dir }).code).toBe(0);
    writeFileSync(path.join(dir, 'big.jsonl'), readFileSync(path.join(dir, 'big.jsonl'), 'utf8') + '{"record_type": bad\n');
    expect(runCliWithFileLimit(2048, ['load', '--lenient', 'big.jsonl', '--db', 'm.duckdb'], { cwd: dir }).code).toBe(2);
    const read = unfinished('m.duckdb', dir);
    expect(read.code).toBe(2);
    expect(read.stderr).toContain('a load into the model did not finish (load --lenient big.jsonl)');
    expect(read.stderr).toContain('`runlens load --lenient big.jsonl --db m.duckdb`');
    // the same files without --lenient are refused (the bad line): the model still lacks the lenient load's files
    expect(runCli(['load', 'big.jsonl', '--db', 'm.duckdb'], { cwd: dir }).code).toBe(2);
    expect(unfinished('m.duckdb', dir).stderr).toContain('(load --lenient big.jsonl)');
    expect(runCli(['load', '--lenient', 'big.jsonl', '--db', 'm.duckdb'], { cwd: dir }).code).toBe(0);
    expect(JSON.parse(runCli(['runs', '--db', 'm.duckdb', '--format', 'json'], { cwd: dir }).stdout)).toHaveLength(300);
  });

  it('stay when the load they name is run again and refused: only a load that completes removes its mark', async () => {
    const dir = tempDir();
    const db = model2(dir);
    const bad = path.join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"record_type": bad\n');
    await mark(db, `load ${bad}`);
    expect(runCli(['load', bad, '--db', db]).code).toBe(2);
    const read = unfinished(db);
    expect(read.code).toBe(2);
    expect(read.stderr).toContain(`a load into the model did not finish (load ${bad})`);
    // a load of its own refused as meant leaves no mark of its own
    const other = writeLines(dir, 'other.jsonl', ['{"record_type": bad']);
    expect(runCli(['load', other, '--db', db]).code).toBe(2);
    expect(unfinished(db).stderr).not.toContain('other.jsonl');
  });

  it('are one per unfinished load: a second killed load is listed too, and each completed load removes only its own', async () => {
    const dir = tempDir();
    const db = model2(dir);
    const a = path.join(dir, 'a.jsonl');
    writeFileSync(a, readFileSync(FAILED));
    await mark(db, `load ${a}`);
    expect(runCli(['generate', '-o', 'big.jsonl', '--nodes', '5', '--runs', '300', '--no-detail'], { cwd: dir }).code).toBe(0);
    const limit = Math.ceil(statSync(db).size / 1024) + 1024;
    expect(runCliWithFileLimit(limit, ['load', 'big.jsonl', '--db', db], { cwd: dir }).code).toBe(2);
    const both = unfinished(db);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain(`load ${a}`);
    expect(both.stderr).toContain('load big.jsonl');
    expect(runCli(['load', a, '--db', db]).code).toBe(0);
    const one = unfinished(db, dir);
    expect(one.code).toBe(2);
    expect(one.stderr).toContain('a load into the model did not finish (load big.jsonl)');
    expect(one.stderr).not.toContain('a.jsonl');
    expect(runCli(['load', 'big.jsonl', '--db', db], { cwd: dir }).code).toBe(0);
    expect(unfinished(db).code).toBe(1); // the failed run of a.jsonl
  });

  it('are said by another load, which loads all the same; the load they name, run again, says nothing of its own', async () => {
    const dir = tempDir();
    const db = model2(dir);
    const lost = path.join(dir, 'lost.jsonl');
    writeFileSync(lost, readFileSync(FAILED));
    await mark(db, `load ${lost}`, `load_unfinished:load ${lost}`);
    const other = runCli(['load', CLEAN, '--db', db]);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toContain(`runlens: warning: ${db}: a load into the model did not finish (load ${lost})`);
    expect(other.stderr).toContain(`run the load again (\`runlens load ${lost} --db ${db}\`)`);
    const again = runCli(['load', lost, '--db', db]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    expect(unfinished(db).code).toBe(1); // the failed run of lost.jsonl, the model whole
  });

  it('refuse the receiving gate as the gate, and explore --receive; receive warns and receives', async () => {
    const dir = tempDir();
    const db = model2(dir);
    await mark(db, 'load lost.jsonl', 'load_unfinished:load lost.jsonl');
    const gate = runCli(['gate', '--receive', '--port', '0', '--timeout', '2s', '--db', db]);
    expect(gate.code).toBe(2);
    expect(gate.stderr).toBe(unfinished(db).stderr);
    // the explorer opens the model before it draws anything
    const { runExplorer } = await import('../../src/ui/run.js');
    await expect(runExplorer({ paths: [], db, receive: { host: '127.0.0.1', port: 0 } })).rejects.toThrow(gate.stderr.replace(/^runlens: /, '').trim());
    const rx = startCli(['receive', '--port', '0', '--db', db]);
    try {
      await until(() => /receiving OTLP/.test(rx.stderr()), rx);
      expect(rx.stderr()).toMatch(/receiving OTLP/);
    } finally {
      rx.kill('SIGTERM');
      await rx.done;
    }
    expect(rx.stderr()).toContain('a load into the model did not finish (load lost.jsonl)');
  });

  it('a model is never made without the mark of the load making it; an empty database says a load may have stopped before it began', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'new.duckdb');
    const w = await openModel(file, { load: 'load first.jsonl' });
    w.close(); // a kill before the load's first file
    const read = runCli(['gate', '--db', file]);
    expect(read.code).toBe(2);
    expect(read.stderr).toContain('a load into the model did not finish (load first.jsonl)');
    // a first load refused as meant (here before it read anything) leaves the model it made without its mark
    const refused = path.join(dir, 'refused.duckdb');
    expect(runCli(['load', path.join(dir, 'missing.jsonl'), '--db', refused]).code).toBe(2);
    expect(runCli(['gate', '--db', refused]).stderr).not.toContain('did not finish');
    const empty = path.join(dir, 'empty.duckdb');
    (await DuckDBInstance.create(empty)).closeSync();
    const r = runCli(['runs', '--db', empty]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a load into it may have stopped before it began');
  });

  it('a load refused by a model a reader holds names readers among those that may hold it', async () => {
    const dir = tempDir();
    const db = model2(dir);
    const inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
    try {
      const r = runCli(['load', FAILED, '--db', db]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${db}: the model is in use by another process`);
      expect(r.stderr).toContain("or a command reading it");
    } finally {
      inst.closeSync();
    }
  });
});

function model2(dir: string): string {
  const db = path.join(dir, 'm.duckdb');
  expect(runCli(['load', CLEAN, '--db', db]).code).toBe(0);
  return db;
}
