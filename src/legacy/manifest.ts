/**
 * The manifest's dependency graph (depends_on, or parent_map when present) and node descriptions.
 * It names the culprit of an upstream skip: the nearest upstream node that errored, or a failed test
 * attached to it (`dbt build` skips the children of a model whose test failed), found breadth-first
 * so the closest root cause wins (skips cascade through skipped nodes).
 */
import { InputError } from '../errors.js';
import { readJsonDocument } from './json-document.js';
import type { NodeDescription } from './resource.js';

export interface Manifest {
  parents: Map<string, string[]>;
  /** the data tests and unit tests of each node they test */
  tests: Map<string, string[]>;
  nodes: Map<string, NodeDescription>;
  invocationId: string | null;
  dbtVersion: string | null;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const SECTIONS = ['nodes', 'sources', 'exposures', 'metrics', 'saved_queries', 'semantic_models', 'unit_tests', 'functions'];

export function readManifest(file: string): Manifest {
  const doc = readJsonDocument(file, 'manifest.json');
  if (!isObj(doc) || !isObj(doc.nodes)) throw new InputError('missing nodes (is this a manifest.json?)', file, undefined, 'nodes');
  return parseManifest(doc);
}

const isTestId = (id: string) => id.startsWith('test.') || id.startsWith('unit_test.');

export function parseManifest(doc: Record<string, unknown>): Manifest {
  const parents = new Map<string, string[]>();
  const nodes = new Map<string, NodeDescription>();
  const meta = isObj(doc.metadata) ? doc.metadata : {};
  const fileOf = packageFiles(doc, str(meta.project_name));
  // macros are described too (a run-operation's result is its macro) but are not in the graph
  for (const s of [...SECTIONS, 'macros']) {
    const sec = doc[s];
    if (!isObj(sec)) continue;
    for (const [id, n] of Object.entries(sec)) {
      if (!isObj(n)) continue;
      const deps = isObj(n.depends_on) && Array.isArray(n.depends_on.nodes) ? n.depends_on.nodes.filter((x): x is string => typeof x === 'string') : [];
      if (s !== 'macros') parents.set(id, deps);
      const cfg = isObj(n.config) ? n.config : {};
      nodes.set(id, {
        name: str(n.name),
        relativePath: fileOf(n),
        materialized: str(cfg.materialized),
        database: str(n.database),
        schema: str(n.schema),
        alias: str(n.alias) ?? str(n.identifier),
        resourceType: str(n.resource_type),
        sourceName: str(n.source_name),
      });
    }
  }
  // parent_map is the engine's own closure of depends_on (tests included): prefer it when present.
  if (isObj(doc.parent_map)) {
    for (const [id, ps] of Object.entries(doc.parent_map)) if (Array.isArray(ps)) parents.set(id, ps.filter((x): x is string => typeof x === 'string'));
  }
  const tests = new Map<string, string[]>();
  for (const [id, ps] of parents) {
    if (!isTestId(id)) continue;
    for (const p of ps) {
      const t = tests.get(p);
      if (t) t.push(id);
      else tests.set(p, [id]);
    }
  }
  return { parents, tests, nodes, invocationId: str(meta.invocation_id) ?? null, dbtVersion: str(meta.dbt_version) ?? null };
}

/** A path as written on Windows or elsewhere, with `/` (the form runlens names files in). */
export const slashed = (p: string): string => p.replace(/\\/g, '/');

/**
 * A node's file relative to the project: its `original_file_path` is relative to its package, so
 * a node of an installed package is prefixed with where the package lies in the project (its
 * `root_path` under the project's, as manifests up to v11 give them). The project is the package
 * `metadata.project_name` names, else the one whose root holds every other package's. A package
 * whose place in the project cannot be known gives no file ('') rather than a wrong one.
 */
function packageFiles(doc: Record<string, unknown>, projectName: string | undefined): (n: Record<string, unknown>) => string | undefined {
  const roots = new Map<string, string>();
  for (const s of SECTIONS) {
    const sec = doc[s];
    if (!isObj(sec)) continue;
    for (const n of Object.values(sec)) {
      const pkg = isObj(n) ? str(n.package_name) : undefined;
      const root = isObj(n) ? str(n.root_path) : undefined;
      if (pkg !== undefined && !roots.has(pkg)) roots.set(pkg, '');
      if (pkg !== undefined && root !== undefined && !roots.get(pkg)) roots.set(pkg, slashed(root).replace(/\/+$/, ''));
    }
  }
  const under = (root: string, top: string) => root === top || root.startsWith(`${top}/`);
  let project = projectName;
  if (project === undefined && roots.size === 1) project = [...roots.keys()][0];
  if (project === undefined) {
    const known = [...roots].filter(([, r]) => r);
    project = known.find(([, r]) => [...roots.values()].every((o) => o !== '' && under(o, r)))?.[0];
  }
  const top = project !== undefined ? roots.get(project) : undefined;
  return (n) => {
    const file = str(n.original_file_path) ?? str(n.path);
    if (file === undefined) return undefined;
    const pkg = str(n.package_name);
    const root = str(n.root_path) !== undefined ? slashed(str(n.root_path)!).replace(/\/+$/, '') : pkg !== undefined ? roots.get(pkg) : undefined;
    if (pkg === undefined || pkg === project || (top && root === top)) return slashed(file);
    if (!top || !root || !under(root, top)) return '';
    return `${root.slice(top.length + 1)}/${slashed(file)}`;
  };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Nearest upstream culprit (breadth-first over parents): an ancestor for which `isCulprit` holds,
 * else a culprit among the tests attached to that ancestor.
 */
export function nearestUpstream(m: Manifest, id: string, isCulprit: (id: string) => boolean): string | undefined {
  const seen = new Set([id]);
  let frontier = [id];
  while (frontier.length) {
    const next: string[] = [];
    for (const x of frontier) {
      for (const p of m.parents.get(x) ?? []) {
        if (seen.has(p)) continue;
        if (isCulprit(p)) return p;
        const test = m.tests.get(p)?.find((t) => t !== id && isCulprit(t));
        if (test) return test;
        seen.add(p);
        next.push(p);
      }
    }
    frontier = next;
  }
  return undefined;
}

/**
 * The manifest's search for the culprit of a node's skip, when the manifest has the node; undefined
 * when it has not (the manifest of another project, or one older than the node): that skip is then
 * read as without a manifest.
 */
export function upstreamSearch(m: Manifest | undefined, id: string, isCulprit: (id: string) => boolean): ((id: string) => string | undefined) | undefined {
  return m?.nodes.has(id) ? (x) => nearestUpstream(m, x, isCulprit) : undefined;
}
