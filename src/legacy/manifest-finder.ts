/**
 * Which manifest.json a translation uses: the one given with --manifest, else the one the engine
 * wrote beside the file (target/manifest.json beside target/run_results.json; for a log in logs/,
 * ../target/manifest.json). A manifest written by another invocation is still the project's graph;
 * the translations use it for the nodes it has (manifest.ts upstreamSearch, resource.ts nodeInfo).
 * Each manifest is read once however many inputs use it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { InputError, errorMessage } from '../errors.js';
import { readManifest, type Manifest } from './manifest.js';

export interface ManifestUse {
  /** the manifest used, if any */
  path?: string;
  /** given with --manifest (else found beside the input) */
  explicit: boolean;
  /** a manifest found beside the input that could not be read (it is then not used) */
  error?: string;
  /** the invocation that wrote it */
  invocationId?: string | null;
}

/** Where the engine leaves the manifest of a file it wrote, nearest first. */
export function manifestCandidates(file: string, kind: 'run_results' | 'sources' | 'log'): string[] {
  const dir = path.dirname(file);
  const base = path.basename(file);
  const out: string[] = [];
  // A copy saved under a prefix ("ci_run_results.json") keeps its manifest under the same prefix.
  const prefixed = /^(.*?)(run_results|sources)\.json(\.gz)?$/i.exec(base);
  if (prefixed && prefixed[1]) out.push(path.join(dir, `${prefixed[1]}manifest.json`));
  out.push(path.join(dir, 'manifest.json'));
  if (kind === 'log') out.push(path.join(dir, '..', 'target', 'manifest.json'));
  return out;
}

/**
 * The project's manifest beside PATH arguments of any kind: in a folder given (or its target/), beside
 * a file, in ../target/ of a file under logs/, one level up from target/metadata/. The first found.
 */
export function manifestBeside(args: string[]): string | undefined {
  for (const arg of args) {
    const dir = existsSync(arg) && !/\.[a-z]+(\.gz)?$/i.test(arg) ? arg : path.dirname(arg);
    const found = [
      path.join(dir, 'manifest.json'),
      path.join(dir, 'target', 'manifest.json'),
      path.join(dir, '..', 'target', 'manifest.json'),
      path.join(dir, '..', 'manifest.json'),
    ].find((p) => existsSync(p));
    if (found) return found;
  }
  return undefined;
}

export class ManifestFinder {
  private readonly read = new Map<string, Manifest | Error>();
  constructor(private readonly explicit?: string) {}

  find(file: string, kind: 'run_results' | 'sources' | 'log'): ManifestUse {
    if (this.explicit) return { path: this.explicit, explicit: true };
    const found = manifestCandidates(file, kind).find((p) => existsSync(p));
    if (!found) return { explicit: false };
    const m = this.get(found);
    // (an InputError about the file names it already)
    if (m instanceof Error) return { explicit: false, error: m instanceof InputError && m.file === found ? m.message : `${found}: ${m.message}` };
    return { path: found, explicit: false, invocationId: m.invocationId };
  }

  /** The manifest of a use (an explicit one that cannot be read is an error). */
  load(use: ManifestUse): Manifest | undefined {
    if (!use.path) return undefined;
    const m = this.get(use.path);
    if (m instanceof Error) throw m;
    use.invocationId = m.invocationId;
    return m;
  }

  private get(p: string): Manifest | Error {
    let m = this.read.get(p);
    if (!m) {
      try {
        m = readManifest(p);
      } catch (e) {
        m = e instanceof Error ? e : new Error(errorMessage(e));
      }
      this.read.set(p, m);
    }
    return m;
  }
}

/**
 * One line for the user: which manifest a translation used, or why none. `runs`: the file's runs,
 * with how many of their nodes the manifest has; one that has none of them is the manifest of
 * another project, which the translation used for no node.
 */
export function describeManifestUse(use: ManifestUse, runInvocationId?: string, runs: { nodes: number; inManifest?: number }[] = []): string {
  if (use.error) return `the manifest.json beside it could not be read, so none was used (${use.error})`;
  if (!use.path) return 'no manifest.json beside it (--manifest FILE gives one)';
  const where = `${use.explicit ? '--manifest ' : ''}${use.path}`;
  const nodes = runs.reduce((n, r) => n + r.nodes, 0);
  if (nodes > 0 && runs.every((r) => !r.inManifest))
    return `with ${where}, which has none of the run's ${nodes} node${nodes === 1 ? '' : 's'} (the manifest of another project?): not used`;
  const other = runInvocationId && use.invocationId && use.invocationId !== runInvocationId ? ', written by another invocation: used as the project\'s graph' : '';
  return `with ${where}${other}`;
}
