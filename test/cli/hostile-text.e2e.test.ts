/**
 * Telemetry text is untrusted: escape sequences, carriage returns and line breaks in names and
 * messages must not reach the terminal as such (clear the screen, set the title, forge rows).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { interfaceStyleRun, tempDir, writeLines } from '../helpers/fixtures.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// ... and a right-to-left override, which would draw the rest of a line backwards ("Trojan Source")
const HOSTILE = '\u001b[2J\u001b[H\u001b]0;all green\u0007\rFORGED\nrow\u202edeliaf';
/** The interface-form run with the hostile text in a span name, a unique_id, the command and the error message. */
const file = writeLines(dir, 'hostile.jsonl', interfaceStyleRun().map((r) => {
  const text = JSON.stringify(r)
    .replaceAll('Node(model.project.orders)', `Node(model.project.orders${HOSTILE})`.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))
    .replaceAll('Syntax error near SELEC', `Syntax error${HOSTILE}`.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  return JSON.parse(text) as object;
}));

describe('hostile text in the terminal output', () => {
  it.each([
    ['tree', file],
    ['runs', file],
    ['query', 'errors', file],
    ['query', 'upstream-skip-chains', file],
    ['critical-path', file],
    ['gate', file],
  ])('%s %s: no escape sequence, no carriage return, the text shown escaped', (...args) => {
    const r = runCli(args);
    expect(r.code === 0 || r.code === 1, r.stderr).toBe(true);
    expect(r.stdout).not.toMatch(/[\u001b\u0007\r\u202e]/);
    // where the name or message is shown (the gate's reasons drop ANSI codes, as the engine's colours)
    if (args[0] === 'tree' || args[1] === 'errors') expect(r.stdout).toContain('\\x1b[2J');
    if (args[0] === 'tree' || args[0] === 'gate') expect(r.stdout).toContain('row\\u202edeliaf');
  });

  it('a bad line that holds escape sequences is quoted escaped by load, load --lenient and validate; --format json as written', () => {
    const lines = readFileSync('samples/failed-build.jsonl', 'utf8').trimEnd().split('\n');
    const bad = path.join(dir, 'escapes-in-a-bad-line.jsonl');
    writeFileSync(bad, [lines[0], 'x\u001b[2J\u001b]0;T\u0007\rFORGED', ...lines.slice(1)].join('\n') + '\n');
    for (const args of [['load', bad], ['load', '--lenient', bad], ['validate', bad]]) {
      const r = runCli(args);
      const said = args.join(' ');
      expect(r.code, said).toBe(args[1] === '--lenient' ? 0 : args[0] === 'validate' ? 1 : 2);
      expect(r.stdout + r.stderr, said).not.toMatch(/[\u001b\u0007\r]/);
      expect(r.stdout + r.stderr, said).toContain('\\x1b[2J');
    }
    const json = runCli(['load', '--lenient', '--format', 'json', bad]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).toContain('\\u001b[2J');
  });

  it('tree: a line break in a span name does not start a row of its own', () => {
    const r = runCli(['tree', file]);
    expect(r.stdout.split('\n').filter((l) => /^row\b/.test(l.trim()))).toEqual([]);
    expect(r.stdout).toContain('⏎ row');
  });
});

describe('exact text in JSON output', () => {
  // the characters Db.rowsText joins rows and fields with, and marks NULL with
  const SEPARATORS = 'customers\u001eone\u001ftwo\u0002three';
  const escaped = (s: string) => s.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const sepFile = writeLines(dir, 'separators.jsonl', interfaceStyleRun().map((r) => JSON.parse(
    JSON.stringify(r).replaceAll('model.project.customers', escaped(`model.project.${SEPARATORS}`)),
  ) as object));

  it('tree --format json gives a span name as written', () => {
    const r = runCli(['tree', sepFile, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(JSON.stringify(`Node(model.project.${SEPARATORS})`));
  });

  it('gate --reporter json gives the errored node id as written', () => {
    const r = runCli(['gate', sepFile, '--reporter', 'json']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain(JSON.stringify(`model.project.${SEPARATORS}`));
  });
});

describe('hostile text in error messages', () => {
  it('an input error quoting a damaged line shows its control characters escaped', () => {
    const lines = interfaceStyleRun().map((r) => JSON.stringify(r));
    lines[2] = `\u001b]0;PWNED\u0007\u001b[2J${lines[2]}`;
    const damaged = writeLines(dir, 'damaged.jsonl', []);
    writeFileSync(damaged, lines.join('\n') + '\n');
    for (const cmd of ['gate', 'load', 'runs']) {
      const r = runCli([cmd, damaged]);
      expect(r.code, cmd).toBe(2);
      expect(r.stderr, cmd).not.toMatch(/[\u001b\u0007]/);
      expect(r.stderr, cmd).toMatch(/damaged\.jsonl:3: /);
    }
  });

  it('NUL padding after the last record is shown as \\x00, not written raw', () => {
    const padded = writeLines(dir, 'padded.jsonl', []);
    writeFileSync(padded, interfaceStyleRun().map((r) => JSON.stringify(r)).join('\n') + '\n' + '\u0000'.repeat(64));
    const r = runCli(['gate', padded]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('\u0000');
  });
});
