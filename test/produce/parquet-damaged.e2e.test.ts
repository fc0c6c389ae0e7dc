/**
 * A Parquet file damaged past its first row groups: every command that reads it says so (exit 2,
 * naming the file), none hands over the rows before the damage as the whole file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duckdb } from '../../src/store/duckdb.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);
const damaged = join(tmp.dir, 'damaged.parquet');

beforeAll(async () => {
  const generated = join(tmp.dir, 'generated.parquet');
  const small = join(tmp.dir, 'small-groups.parquet');
  expect(runCli(['generate', '-o', generated, '--runs', '10', '--nodes', '1000', '--seed', '3']).code).toBe(0);
  // row groups of 20,000 rows: the first ones are read and handed over before the damaged one
  const db = await duckdb.DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run(`COPY (FROM read_parquet('${generated}')) TO '${small}' (FORMAT parquet, ROW_GROUP_SIZE 20000)`);
  c.closeSync();
  db.closeSync();
  const bytes = readFileSync(small);
  bytes.fill(0xff, Math.floor(bytes.length * 0.7), Math.floor(bytes.length * 0.7) + 20000);
  writeFileSync(damaged, bytes);
});

describe('a Parquet file damaged after its first row groups', () => {
  it.each([
    ['convert', ['convert', damaged, join(tmp.dir, 'out.jsonl')]],
    ['validate', ['validate', damaged]],
    ['runs', ['runs', damaged]],
  ])('%s: exit 2 naming the file', (_cmd, args) => {
    const r = runCli(args);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/damaged.parquet: not a readable Parquet file: /);
  });
});
