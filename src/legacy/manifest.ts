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
  for (const s of SECTIONS) {
    const sec = doc[s];
    if (!isObj(sec)) continue;
    for (const [id, n] of Object.entries(sec)) {
      if (!isObj(n)) continue;
      const deps = isObj(n.depends_on) && Array.isArray(n.depends_on.nodes) ? n.depends_on.nodes.filter((x): x is string => typeof x === 'string') : [];
      parents.set(id, deps);
      const cfg = isObj(n.config) ? n.config : {};
      nodes.set(id, {
        name: str(n.name),
        relativePath: str(n.original_file_path) ?? str(n.path),
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
  const meta = isObj(doc.metadata) ? doc.metadata : {};
  return { parents, tests, nodes, invocationId: str(meta.invocation_id) ?? null, dbtVersion: str(meta.dbt_version) ?? null };
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
