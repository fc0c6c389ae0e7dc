/** The committed lock installs on the Node version package.json's `engines` claims. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const semver = require('semver') as { minVersion(r: string): { version: string } | null; satisfies(v: string, r: string): boolean };

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { version?: string; optional?: boolean; os?: string[]; cpu?: string[]; engines?: { node?: string } }>;
};

describe('package-lock.json', () => {
  const oldest = semver.minVersion(pkg.engines.node)!.version;

  it(`every locked package supports the oldest Node that engines allows (${pkg.engines.node})`, () => {
    const refused = Object.entries(lock.packages)
      .filter(([name, p]) => name !== '' && p.engines?.node && !semver.satisfies(oldest, p.engines.node))
      .map(([name, p]) => `${name}@${p.version} wants node ${p.engines!.node}`);
    expect(refused).toEqual([]);
  });

  it("records DuckDB's native bindings for every platform, so npm ci accepts the lock anywhere", () => {
    const bindings = Object.keys(lock.packages).filter((n) => /node_modules\/@duckdb\/node-bindings-/.test(n));
    for (const platform of ['linux-x64', 'linux-arm64', 'darwin-arm64', 'darwin-x64', 'win32-x64']) {
      expect(bindings.some((n) => n.endsWith(`node-bindings-${platform}`))).toBe(true);
    }
  });
});
