/** A client listing that leaves columns out to fit suggests only a --format the client commands take. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatOption, printListing } from '../../src/client/output.js';

describe('client listing on a narrow terminal', () => {
  const columns = process.env.COLUMNS;
  afterEach(() => {
    vi.restoreAllMocks();
    if (columns === undefined) delete process.env.COLUMNS;
    else process.env.COLUMNS = columns;
  });

  it('names the columns left out and a format that has them all', () => {
    process.env.COLUMNS = '40';
    const err: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    const rows = [{ id: 1, name: 'nightly build of everything', execute_steps: ['runlens generate -o telemetry.jsonl'], created_at: '2026-01-01T00:00:00Z' }];
    printListing(rows, ['id', 'name', 'execute_steps', 'created_at'], 'text', 'jobs');
    const note = err.join('');
    expect(note).toContain('left out to fit 40 columns');
    const suggested = [...note.matchAll(/--format (\w+)/g)].map((m) => m[1]!).concat([...note.matchAll(/ or (\w+) has/g)].map((m) => m[1]!));
    expect(suggested.length).toBeGreaterThan(0);
    for (const f of suggested) expect(formatOption.choices as readonly string[]).toContain(f);
  });
});
