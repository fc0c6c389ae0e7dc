/**
 * Node descriptions for the writer from what the older engine tells us: the unique_id prefix is the
 * resource type; a manifest or a log's node_info adds path, relation and materialization.
 */
import type { NodeInfo } from '../produce/node-attrs.js';
import { NodeMaterialization, NodeType, normalizeEnum } from '../telemetry/enums.js';
import { slashed } from './manifest.js';

export const resourceTypeOf = (uniqueId: string): string => {
  const dot = uniqueId.indexOf('.');
  return dot < 0 ? uniqueId : uniqueId.slice(0, dot);
};

/** A few distinct values (resource types, materializations) each normalized once, not once per node. */
function memo(f: (v: string) => string | undefined): (v: string) => string | undefined {
  const seen = new Map<string, string | undefined>();
  return (v) => {
    if (seen.has(v)) return seen.get(v);
    const r = f(v);
    if (seen.size < 1000) seen.set(v, r);
    return r;
  };
}

/** The engine's NodeType for a legacy resource type; unknown types stay unspecified instead of failing. */
export const nodeTypeOf = memo((resourceType) => {
  const rt = resourceType === 'sql_operation' ? 'operation' : resourceType;
  const short = normalizeEnum(NodeType, rt);
  return short && NodeType.entries.some((e) => e.short === short) ? short : 'unspecified';
}) as (resourceType: string) => string;

/** A known materialization's short name, undefined for a custom one. */
const materializationOf = memo((m) => {
  const short = normalizeEnum(NodeMaterialization, m);
  return short && NodeMaterialization.entries.some((e) => e.short === short) ? short : undefined;
});

/** Name as the engine shows it: the third part of the id (tests carry a hash after it). */
export function nameOf(uniqueId: string): string {
  const a = uniqueId.indexOf('.');
  if (a < 0) return uniqueId;
  const b = uniqueId.indexOf('.', a + 1);
  if (b < 0) return uniqueId.slice(a + 1);
  const c = uniqueId.indexOf('.', b + 1);
  return c < 0 ? uniqueId.slice(b + 1) : uniqueId.slice(b + 1, c);
}

export interface NodeDescription {
  name?: string;
  /** the file relative to the project; '' when the manifest has the node but its file cannot be named */
  relativePath?: string;
  materialized?: string;
  database?: string;
  schema?: string;
  alias?: string;
  resourceType?: string;
  sourceName?: string;
}

export function nodeInfo(uniqueId: string, d: NodeDescription = {}): NodeInfo {
  const info: NodeInfo = { uniqueId, name: d.name || nameOf(uniqueId), nodeType: nodeTypeOf(d.resourceType || resourceTypeOf(uniqueId)) };
  if (d.relativePath) info.relativePath = d.relativePath;
  if (d.database) info.database = d.database;
  if (d.schema) info.schema = d.schema;
  if (d.alias) info.identifier = d.alias;
  if (d.sourceName) info.sourceName = d.sourceName;
  if (d.materialized) {
    const m = materializationOf(d.materialized);
    if (m) info.materialization = m;
    else {
      info.materialization = 'custom';
      info.customMaterialization = d.materialized;
    }
  }
  return info;
}

/** The folder each resource type lives in by default (dbt_project.yml's *-paths). */
const DEFAULT_FOLDER: Record<string, string> = { model: 'models', seed: 'seeds', snapshot: 'snapshots', analysis: 'analyses', test: 'tests' };

/**
 * A node's file relative to the project, from a log's node_info.node_path (relative to the
 * resource's folder), under that type's default folder. Generic data tests (unique_id with a hash
 * part), unit tests, hooks and other types have no file of their own the log names: none.
 */
export function projectPath(resourceType: string, uniqueId: string, nodePath: string): string | undefined {
  const folder = DEFAULT_FOLDER[resourceType];
  if (!nodePath || !folder) return undefined;
  nodePath = slashed(nodePath);
  if (resourceType === 'test' && uniqueId.split('.').length > 3) return undefined;
  return nodePath.startsWith(`${folder}/`) ? nodePath : `${folder}/${nodePath}`;
}
