/** Reporters whatever the text in the run: the markdown table stays a table (CommonMark + GFM), the JUnit testcases keep their names. */
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { renderGithub, renderJson, renderJunit, renderMarkdown, renderText } from '../../src/gate/reporters.js';
import { MAX_LINE_CHARS } from '../../src/gate/reason.js';
import { DEFAULT_FAIL_ON, evaluateGate } from '../../src/gate/rules.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { interfaceStyleRun, tempDir, writeLines } from '../helpers/fixtures.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('markdown reporter', () => {
  it('keeps each row on one line: a lone CR or an LF in an id, a command or a file path', async () => {
    const records = interfaceStyleRun().map((r) => {
      const rec = r as { record_type: string; span_id: string; attributes: Record<string, unknown> };
      if (rec.span_id === '0000000000000036' && rec.record_type === 'SpanEnd') return { ...rec, attributes: { ...rec.attributes, relative_path: 'models/new\nline.sql' } };
      if (rec.span_id === '0000000000000001') return { ...rec, attributes: { ...rec.attributes, eval_args: { command: 'build\r| x | y |' } } };
      return JSON.parse(JSON.stringify(rec).replaceAll('test.project.not_null_x', 'test.project.not\\rnull'));
    });
    const db = await openModel();
    try {
      await loadPaths(db, [writeLines(dir, 'hostile.jsonl', records)]);
      const md = renderMarkdown(await evaluateGate(db, { failOn: DEFAULT_FAIL_ON }));
      expect(md).not.toMatch(/\r/);
      const table = md.split('\n').filter((l) => l.startsWith('|'));
      // header, rule line, the errored model, the failed test
      expect(table).toHaveLength(4);
      expect(md).toContain('build<br>\\| x \\| y \\|');
      const rows = md.slice(md.indexOf('| run |')).trimEnd().split('\n');
      expect(rows.every((l) => l.startsWith('|') && l.endsWith('|'))).toBe(true);
      expect(md).toContain('`models/new line.sql`');
    } finally {
      db.close();
    }
  });

  it('junit: a passing test whose id holds a control character keeps its testcase (name, time)', async () => {
    // the interface form's tests: not_null_x fails, unique_y warns; unique_y renamed with separators of the rows read back
    const odd = 'test.project.unique\u001ey\u001fz\u0002';
    const records = interfaceStyleRun().map((r) => JSON.parse(JSON.stringify(r).replaceAll('test.project.unique_y', odd.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))));
    const db = await openModel();
    try {
      await loadPaths(db, [writeLines(dir, 'control.jsonl', records)]);
      const xml = renderJunit(await evaluateGate(db, { failOn: DEFAULT_FAIL_ON, withTests: true }));
      expect(xml).not.toContain('NaN');
      // (XML 1.0 cannot hold these characters: the name goes without them)
      expect(xml).toMatch(/<testcase name="test\.project\.uniqueyz" classname="test" [^>]*time="[\d.]+"/);
    } finally {
      db.close();
    }
  });
});

describe('escape sequences and control characters reach no reporter raw', () => {
  const HOSTILE = '\u001b[2J\u001b]0;pwned\u0007boom\u0007\rover\u001bc';
  const ID = 'model.project.cust\u001b[31momers';
  const PATH = 'models/cust\u001b]0;t\u0007.sql';

  it('the run status message, a unique_id and a file path: github and markdown show them as text does, json has the cleaned reason', async () => {
    const records = interfaceStyleRun().map((r) => {
      const rec = r as { record_type: string; span_id: string; attributes: Record<string, unknown>; status?: unknown };
      if (rec.span_id === '0000000000000001' && rec.record_type === 'SpanEnd') return { ...rec, status: { code: 2, message: `Executed with errors ${HOSTILE}` } };
      if (rec.span_id === '0000000000000036' && rec.record_type === 'SpanEnd') return { ...rec, attributes: { ...rec.attributes, relative_path: PATH } };
      return rec;
    }).map((r) => JSON.parse(JSON.stringify(r).replaceAll('model.project.customers', JSON.stringify(ID).slice(1, -1))));
    const db = await openModel();
    try {
      await loadPaths(db, [writeLines(dir, 'escapes.jsonl', records)]);
      const result = await evaluateGate(db, { failOn: DEFAULT_FAIL_ON });
      const run = result.runs[0]!;
      expect(run.rule).toBe('run-error');
      expect(run.reason).toMatch(/^the invocation ended with status ERROR: Executed with errors boom/);
      // escape sequences removed, a CR a line break, as in a node's reason (json escapes what is left)
      expect(run.reason).toBe('the invocation ended with status ERROR: Executed with errors boom\u0007\nover\u001bc');
      for (const out of [renderGithub(result), renderMarkdown(result), renderText(result)]) {
        expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
        expect(out).toContain('model.project.cust\\x1b[31momers');
        expect(out).toContain('models/cust\\x1b]0;t\\x07.sql');
      }
    } finally {
      db.close();
    }
  });
});

describe('a long line of an error', () => {
  it('is cut at MAX_LINE_CHARS characters and "…" in the reason; json error_text keeps the whole text', async () => {
    const body = `Database Error\n${'x'.repeat(3000)}\nafter`;
    const records = interfaceStyleRun().map((r) => {
      const rec = r as { record_type: string; body?: string };
      return rec.record_type === 'LogRecord' ? { ...rec, body } : rec;
    });
    const db = await openModel();
    try {
      await loadPaths(db, [writeLines(dir, 'long-line.jsonl', records)]);
      const js = JSON.parse(renderJson(await evaluateGate(db, { failOn: DEFAULT_FAIL_ON })));
      const node = js.offenders.find((o: { unique_id: string }) => o.unique_id === 'model.project.customers');
      expect(node.reason).toBe(`Database Error\n${'x'.repeat(MAX_LINE_CHARS)}…\nafter`);
      expect(node.error_text).toBe(body);
    } finally {
      db.close();
    }
  });
});
