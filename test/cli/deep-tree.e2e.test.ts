/** `runlens tree` of a chain of spans far deeper than any engine writes: drawn to a capped indentation, each deeper line saying its depth. */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { TRACE, span, tempDir, writeLines } from '../helpers/fixtures.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DEPTH = 3000;
const id = (i: number) => (i + 1).toString(16).padStart(16, '0');

describe('tree of a chain 3,000 spans deep', () => {
  it('draws it with the indentation capped, each deeper line marked with its depth', () => {
    const records = Array.from({ length: DEPTH }, (_, i) =>
      span({ trace: TRACE, id: id(i), parent: i ? id(i - 1) : undefined, name: `step ${i}`, eventType: 'v1.public.events.fusion.generic.GenericOpExecuted', start: i, end: 2 * DEPTH - i }),
    ).flat();
    const file = writeLines(dir, 'chain.jsonl', records);
    const r = runCli(['tree', file]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(DEPTH + 1);
    expect(lines[DEPTH]).toMatch(/^ *└─ \[depth 2999\] step 2999  /);
    // the indentation stops growing at the cap: the deepest line is as wide as the first capped one
    const width = (l: string) => l.indexOf('└─');
    expect(width(lines[DEPTH]!)).toBe(width(lines[200]!));
    expect(r.stdout.length).toBeLessThan(1_000_000);
  });
});
