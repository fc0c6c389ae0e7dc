/**
 * The SQL normalizer's macros (generated from src/telemetry/enums.ts) agree with the JS normalizer on
 * every spelling an input may carry: constant names (the fast paths), odd casing, bare suffixes,
 * short names, prose, numbers and unknown values (kept, lower-cased).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlString, type Db } from '../../src/store/db.js';
import { openModel } from '../../src/store/load.js';
import { ATTR_STRUCT_FIELDS } from '../../src/store/normalize-sql.js';
import { OBJECT_ATTRIBUTES } from '../../src/telemetry/details.js';
import { ExecutionPhase, NodeOutcome, NodeSkipReason, NodeType, TestOutcome, normalizeEnum, type EnumTable } from '../../src/telemetry/enums.js';

let db: Db;
beforeAll(async () => {
  db = await openModel();
});
afterAll(() => db.close());

const MACROS: [string, EnumTable][] = [
  ['rl_outcome', NodeOutcome],
  ['rl_skip_reason', NodeSkipReason],
  ['rl_test_outcome', TestOutcome],
  ['rl_phase', ExecutionPhase],
  ['rl_node_type', NodeType],
];

function spellings(t: EnumTable): string[] {
  const out: string[] = [];
  for (const e of t.entries) {
    const constant = t.prefix + e.suffix;
    out.push(constant, constant.toLowerCase(), t.prefix + e.suffix[0] + e.suffix.slice(1).toLowerCase(), e.suffix, e.short, String(e.number));
    out.push(e.short[0]!.toUpperCase() + e.short.slice(1), ` ${constant} `);
  }
  out.push(`${t.prefix}SOMETHING_NEW`, 'Something New', 'something new', 'some-thing', '999');
  return out;
}

describe('the attributes the model reads', () => {
  it('the object-valued ones are those a load holds to being objects', () => {
    const objects = Object.entries(ATTR_STRUCT_FIELDS).filter(([, t]) => typeof t === 'object').map(([k]) => k);
    expect([...OBJECT_ATTRIBUTES].sort()).toEqual(objects.sort());
  });
});

describe('SQL enum macros', () => {
  for (const [fn, table] of MACROS) {
    it(`${fn} agrees with normalizeEnum(${table.name}) on every spelling`, async () => {
      const values = spellings(table);
      const rows = await db.all<{ v: string; n: string | null }>(
        `SELECT v, ${fn}(v) AS n FROM (VALUES ${values.map((v) => `(${sqlString(v)})`).join(', ')}) AS x(v)`,
      );
      expect(rows).toHaveLength(values.length);
      for (const r of rows) expect([r.v, r.n]).toEqual([r.v, normalizeEnum(table, r.v)]);
      expect(await db.scalar(`SELECT ${fn}(NULL)`)).toBeNull();
      expect(await db.scalar(`SELECT ${fn}('')`)).toBeNull();
    });
  }

  it('rl_trace_id lower-cases hex ids and takes the dashes out of the UUID form', async () => {
    const rows = await db.all<{ t: string }>(
      `SELECT rl_trace_id(v) AS t FROM (VALUES ('019CADC69A807832BEFB1D448955BBE6'), ('019cadc6-9a80-7832-befb-1d448955bbe6'), ('019CADC6-9A80-7832-BEFB-1D448955BBE6')) AS x(v)`,
    );
    expect(rows.map((r) => r.t)).toEqual(Array(3).fill('019cadc69a807832befb1d448955bbe6'));
    expect(await db.scalar('SELECT rl_trace_id(NULL)')).toBeNull();
  });
});
