/**
 * Every file of ../shared/samples/legacy-corpus (real run_results.json of schema v1 to v6 and real
 * JSON logs, PROVENANCE.md there) read directly, as the reading commands read it: one run with the
 * invocation id as its trace, each node with the outcome its own status means, the gate's verdict
 * what those statuses say, node files from the manifest beside it, and a tree that reads as the
 * engine's (process, invocation, then phases in the order they run).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTreeText } from '../../src/analyze/tree.js';
import { DEFAULT_FAIL_ON, evaluateGate } from '../../src/gate/rules.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { SHARED_SAMPLES, samplesNote } from '../helpers/samples.js';
import { fromLog, fromRunResults, nodesOf, triple } from './helpers.js';

const CORPUS = path.join(SHARED_SAMPLES, 'legacy-corpus');
const note = samplesNote(CORPUS);
const files = note.missing ? [] : readdirSync(CORPUS).filter((f) => /run_results.*\.json$|\.jsonl$/.test(f)).sort();
const manifestOf = (f: string) => path.join(CORPUS, f.replace(/run_results\.json$/, 'manifest.json'));

describe.skipIf(note.missing)(note.title('the legacy corpus read in place'), () => {
  const dbs: Db[] = [];
  afterAll(() => dbs.forEach((d) => d.close()));

  it('holds the 26 run_results.json files and 5 logs PROVENANCE.md lists', () => {
    expect(files.filter((f) => f.endsWith('.json'))).toHaveLength(26);
    expect(files.filter((f) => f.endsWith('.jsonl'))).toHaveLength(5);
  });

  it.each(files)('%s', async (name) => {
    const file = path.join(CORPUS, name);
    const exp = name.endsWith('.json') ? fromRunResults(file) : fromLog(file);
    const db = await openModel();
    dbs.push(db);
    const report = await loadPaths(db, [file]);
    const runs = await db.all('SELECT trace_id, invocation_id, command, ended FROM runs');
    expect(runs).toEqual([{ trace_id: exp.invocationId.replace(/-/g, ''), invocation_id: exp.invocationId, command: runs[0]!.command, ended: true }]);
    if (exp.command) expect(runs[0]!.command).toBe(exp.command);
    const nodes = await nodesOf(db);
    expect(new Map([...nodes].map(([id, r]) => [id, triple(r)]))).toEqual(exp.nodes);
    // the gate fails exactly when a node errored or a test failed
    const gate = await evaluateGate(db, { failOn: DEFAULT_FAIL_ON });
    expect(gate.passed).toBe(![...exp.nodes.values()].some((t) => t.startsWith('error') || t.endsWith('/failed')));
    expect(await db.scalar(`SELECT count(*)::INT FROM spans WHERE orphan OR NOT ended`)).toBe(0);
    // the manifest beside a run_results.json is used, and says where each node is defined
    const manifest = manifestOf(name);
    if (name.endsWith('run_results.json') && existsSync(manifest)) {
      expect(report.files[0]!.note).toContain(`with ${manifest}`);
      const doc = JSON.parse(readFileSync(manifest, 'utf8'));
      // the file relative to the project: with /, and a package's under where its root lies in the project's
      const slashed = (p: string) => p.replace(/\\/g, '/');
      const sections = ['nodes', 'sources', 'exposures', 'unit_tests', 'saved_queries'];
      const roots = sections.flatMap((k) => Object.values((doc[k] ?? {}) as Record<string, { root_path?: string }>)).map((n) => n.root_path).filter((r): r is string => !!r).map(slashed);
      const top = roots.sort((a, b) => a.length - b.length)[0];
      const defined = (id: string) => {
        const n = [...sections, 'macros'].map((k) => doc[k]?.[id]).find(Boolean);
        if (!n?.original_file_path) return undefined;
        const within = n.root_path && top ? path.posix.relative(top, slashed(n.root_path)) : '';
        return (within ? `${within}/` : '') + slashed(n.original_file_path);
      };
      const rows = await db.all(`SELECT unique_id, relative_path FROM node_results`);
      for (const r of rows) expect(r.relative_path ?? undefined, r.unique_id as string).toBe(defined(r.unique_id as string));
    } else expect(report.files[0]!.note).toContain('no manifest.json beside it');
    // process and invocation first, then the phases in the order the older engine runs them
    const lines = [...(await buildTreeText(db, runs[0]!.trace_id as string, 1)).lines].map(([text]) => text);
    expect(lines[0]).toMatch(/^dbt process /);
    expect(lines[1]).toMatch(/^dbt invocation \(/);
    const phases = lines.filter((l) => /Phase: /.test(l)).map((l) => /Phase: (\w+)/.exec(l)![1]);
    const order = ['ON_RUN_START', 'RENDER', 'RUN', 'ON_RUN_END'];
    expect(phases).toEqual([...phases].sort((a, b) => order.indexOf(a!) - order.indexOf(b!)));
  });
});
