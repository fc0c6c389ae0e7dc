/** A source's freshness reads the same from the engine's Parquet layout as from JSONL, on every kind of span. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

type Rec = { record_type: string; event_type: string; attributes: Record<string, unknown> };

/** The bundled clean build with one model turned into a source whose freshness failed, and no NodeProcessed for it. */
function staleSourceRun(dir: string): string {
  const records = readFileSync(path.join(ROOT, 'samples/clean-build.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Rec);
  const uid = records.find((r) => r.event_type.endsWith('NodeProcessed') && r.attributes.node_type === 'NODE_TYPE_MODEL')!.attributes.unique_id;
  const mine = (r: Rec) => r.attributes?.unique_id === uid;
  const out = records.filter((r) => !(mine(r) && r.event_type.endsWith('NodeProcessed')));
  for (const r of out) {
    if (!mine(r) || !r.event_type.endsWith('NodeEvaluated')) continue;
    r.attributes.node_type = 'NODE_TYPE_SOURCE';
    if (r.record_type === 'SpanEnd' && r.attributes.node_outcome === 'NODE_OUTCOME_SUCCESS') {
      delete r.attributes.node_evaluation_detail;
      r.attributes.node_freshness_outcome = { age_seconds: '90000', node_freshness_outcome: 'SOURCE_FRESHNESS_OUTCOME_OUTCOME_FAILED' };
    }
  }
  return writeLines(dir, 'stale-source.jsonl', out);
}

describe('source freshness from Parquet', () => {
  it("a stale source whose result is its evaluation fails the gate from the Parquet as from the JSONL", () => {
    const dir = tempDir();
    const jsonl = staleSourceRun(dir);
    const parquet = path.join(dir, 'stale-source.parquet');
    expect(runCli(['convert', jsonl, parquet]).code).toBe(0);
    const sql = `SELECT unique_id, kind, freshness_outcome FROM nodes WHERE freshness_outcome IS NOT NULL ORDER BY ALL`;
    const fromJsonl = JSON.parse(runCli(['query', '--sql', sql, jsonl, '--format', 'json']).stdout);
    expect(fromJsonl.length).toBeGreaterThan(0);
    expect(JSON.parse(runCli(['query', '--sql', sql, parquet, '--format', 'json']).stdout)).toEqual(fromJsonl);
    for (const f of [jsonl, parquet]) {
      const g = runCli(['gate', f]);
      expect(g.code, `${f}: ${g.stdout}`).toBe(1);
      expect(g.stdout).toContain('source freshness failed');
    }
  });
});
