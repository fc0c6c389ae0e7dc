/**
 * Start-up stays light: `--version` and `--help` load no package, and a command's `--help` loads none
 * of the heavy ones (its handler imports them). Speed itself is measured by `npm run bench -- startup`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const HEAVY = /^(@duckdb\/|@opentelemetry\/|fastify$|ink$|react$|apache-arrow$|parquet-wasm$|better-sqlite3$|pg$|protobufjs$|undici$)/;
const dir = tempDir();
const hook = path.join(dir, 'hook.mjs');
// Records each package a process imports (ES modules through a resolve hook) or requires (CommonJS
// through Module._load), one name a line, in RUNLENS_TEST_PACKAGES.
writeFileSync(
  hook,
  `import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
const pkg = (url) => /node_modules\\/((@[^/]+\\/)?[^/]+)/.exec(url)?.[1];
const load = Module._load;
Module._load = function (request, parent, isMain) {
  try {
    const name = pkg(Module._resolveFilename(request, parent, isMain));
    if (name) appendFileSync(process.env.RUNLENS_TEST_PACKAGES, name + '\\n');
  } catch {}
  return load.apply(this, arguments);
};
register('data:text/javascript,' + encodeURIComponent(\`
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  const m = /node_modules\\\\/((@[^/]+\\\\/)?[^/]+)/.exec(r.url);
  if (m) appendFileSync(process.env.RUNLENS_TEST_PACKAGES, m[1] + '\\\\n');
  return r;
}\`));
`,
);

let n = 0;
/** The packages `runlens ARGS` imports, and its result. */
function packagesOf(args: string[]): { packages: string[]; code: number; stdout: string } {
  const log = path.join(dir, `packages-${n++}.txt`);
  writeFileSync(log, '');
  const r = runCli(args, { env: { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}`, RUNLENS_TEST_PACKAGES: log } });
  return { packages: [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))].sort(), code: r.code, stdout: r.stdout };
}

describe('start-up', () => {
  it('the hook sees what a command imports (so the checks below can fail)', () => {
    const r = packagesOf(['runs', 'samples/clean-build.jsonl', '--format', 'json']);
    expect(r.code).toBe(0);
    expect(r.packages).toContain('@duckdb/node-api');
  });

  it('--version and --help load no package at all', () => {
    const v = packagesOf(['--version']);
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(v.packages).toEqual([]);
    const h = packagesOf(['--help']);
    expect(h.code).toBe(0);
    expect(h.packages).toEqual([]);
  });

  it.each(Object.keys(COMMANDS))('%s --help loads no heavy package', (name) => {
    const r = packagesOf([name, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`runlens ${name}`);
    expect(r.packages.filter((p) => HEAVY.test(p))).toEqual([]);
  });
});
