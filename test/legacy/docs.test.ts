/**
 * Every command in the shell blocks of docs/legacy.md and of README's "Older engine" section works
 * when pasted (run from a scratch folder holding the bundled samples): exit 0, or 1 where a gate
 * finds what it looks for, never a usage or input error.
 */
import { symlinkSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

function shellCommands(markdown: string): string[] {
  const out: string[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g))
    for (const line of block[1]!.split('\n')) if (line.startsWith('runlens ')) out.push(line.replace(/\s+#.*$/, ''));
  return out;
}

/** Words of a command line as a shell splits these (single quotes only). */
const words = (line: string) => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Older engine'), readme.indexOf('\n## ', readme.indexOf('## Older engine') + 3));
const commands = [...shellCommands(readFileSync(path.join(ROOT, 'docs/legacy.md'), 'utf8')), ...shellCommands(section)];

describe('the older engine commands of the docs, pasted', () => {
  const cwd = tempDir('runlens-docs-');
  symlinkSync(path.join(ROOT, 'samples'), path.join(cwd, 'samples'));

  it('are there', () => expect(commands.length).toBeGreaterThan(10));

  it.each(commands)('%s', (line) => {
    const r = runCli(words(line).slice(1), { cwd });
    expect(r.code === 0 || (r.code === 1 && line.startsWith('runlens gate')), `${line}\n${r.stderr}`).toBe(true);
  });
});
