/** Every command's and subcommand's --help: an example, every option and positional described, no `[default: []]` noise, no --version. */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/index.js';
import { runCli } from '../helpers/cli.js';
import { EXIT } from '../../src/exit-codes.js';

/** Every command, and the subcommands a command's help lists (webhooks list, jobs run...). */
const pages = Object.keys(COMMANDS).flatMap((c) => {
  const help = runCli([c, '--help']).stdout;
  const subs = help.includes('\nCommands:\n') ? [...help.matchAll(new RegExp(`^ {2}runlens ${c} ([a-z-]+)`, 'gm'))].map((m) => [c, m[1]!]) : [];
  return [[c], ...subs];
});

/** Option and positional lines of a yargs help page: the name(s), then what follows them. */
function entries(help: string): { name: string; rest: string }[] {
  const out: { name: string; rest: string }[] = [];
  let section = '';
  for (const line of help.split('\n')) {
    if (/^\S.*:$/.test(line)) section = line;
    if (section === 'Commands:' || section === 'Examples:') continue;
    const m = /^ {2}((?:-\w, )?--?[\w-]+(?:, --[\w-]+)*|[a-z][\w-]*)(?: {2,}(.*))?$/.exec(line);
    if (m && section) out.push({ name: m[1]!, rest: m[2] ?? '' });
  }
  return out;
}

describe.each(pages)('runlens %s --help', (...cmd: string[]) => {
  const h = runCli([...cmd, '--help']);

  it('exits 0 and shows usage', () => {
    expect(h.code).toBe(0);
    expect(h.stdout).toContain(`runlens ${cmd.join(' ')}`);
  });

  it('has at least one example', () => {
    expect(pages.length).toBeGreaterThan(Object.keys(COMMANDS).length);
    expect(h.stdout).toMatch(/\nExamples:\n {2}runlens /);
  });

  it('describes every option and positional, without yargs noise or --version', () => {
    const found = entries(h.stdout);
    expect(found.length).toBeGreaterThan(0);
    for (const e of found) expect(e.rest, `${cmd.join(' ')} ${e.name}`).not.toMatch(/^(\[|$)/);
    // (a positional in <angle brackets> is required by its usage line; yargs says so too)
    expect(h.stdout).not.toMatch(/\[default: \[\]\]|--version/);
    // a list positional is optional ([paths..]); a list option ([array]) may be required (jobs create --step)
    expect(/\nPositionals:\n[\s\S]*?(\n\n|$)/.exec(h.stdout)?.[0] ?? '').not.toMatch(/\[array\] \[required\]/);
  });
});

describe('help text', () => {
  it('--db says what the file is', () => {
    const h = runCli(['runs', '--help']).stdout;
    expect(h).toMatch(/--db +a DuckDB file holding a model/);
  });
});

describe('finding the command', () => {
  it('an unknown command says so and suggests the nearest', () => {
    const r = runCli(['tre', 'samples/clean-build.jsonl']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('runlens: unknown command "tre"; did you mean "tree"?\nRun `runlens --help` for the list of commands.\n');
    expect(runCli(['webhoks']).stderr).toContain('did you mean "webhooks"?');
    expect(runCli(['frobnicate']).stderr).toMatch(/^runlens: unknown command "frobnicate"\n/);
  });

  it('a command group alone lists its subcommands', () => {
    const r = runCli(['webhooks']);
    expect(r.code).toBe(2);
    for (const sub of ['list', 'get', 'create', 'update', 'delete', 'verify', 'listen']) expect(r.stderr).toMatch(new RegExp(`runlens webhooks ${sub}\\b`));
  });

  it('runlens alone lists the commands, grouped', () => {
    const r = runCli([]);
    expect(r.code).toBe(2);
    for (const c of Object.keys(COMMANDS)) expect(r.stderr).toMatch(new RegExp(`^ {2}${c} `, 'm'));
    expect(r.stderr).toMatch(/^Read telemetry:$/m);
    expect(runCli(['--help']).stdout).toBe(r.stderr.replace(/^runlens: name a command\n\n/, ''));
  });

  it('--help names every exit code of the table', () => {
    const help = runCli(['--help']).stdout.replace(/\s+/g, ' ');
    const said = help.slice(help.indexOf('Exit codes:'));
    for (const code of new Set(Object.values(EXIT))) expect(said).toMatch(new RegExp(`\\b${code}\\b`));
    expect(said).toMatch(/143 SIGTERM, 129 SIGHUP/);
  });
});
