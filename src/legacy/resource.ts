/**
 * Node descriptions for the writer from what the older engine tells us: the unique_id prefix is the
 * resource type; a manifest or a log's node_info adds path, relation and materialization.
 */
import type { NodeInfo } from '../produce/node-attrs.js';
import { NodeMaterialization, NodeType, normalizeEnum } from '../telemetry/enums.js';

export const resourceTypeOf = (uniqueId: string): string => uniqueId.split('.', 1)[0] ?? '';

/** The engine's NodeType for a legacy resource type; unknown types stay unspecified instead of failing. */
export function nodeTypeOf(resourceType: string): string {
  const rt = resourceType === 'sql_operation' ? 'operation' : resourceType;
  const short = normalizeEnum(NodeType, rt);
  return short && NodeType.entries.some((e) => e.short === short) ? short : 'unspecified';
}

/** Name as the engine shows it: the third part of the id (tests carry a hash after it). */
export function nameOf(uniqueId: string): string {
  const parts = uniqueId.split('.');
  return parts.length >= 3 ? parts[2]! : parts[parts.length - 1]!;
}

export interface NodeDescription {
  name?: string;
  relativePath?: string;
  materialized?: string;
  database?: string;
  schema?: string;
  alias?: string;
  resourceType?: string;
}

export function nodeInfo(uniqueId: string, d: NodeDescription = {}): NodeInfo {
  const info: NodeInfo = { uniqueId, name: d.name || nameOf(uniqueId), nodeType: nodeTypeOf(d.resourceType || resourceTypeOf(uniqueId)) };
  if (d.relativePath) info.relativePath = d.relativePath;
  if (d.database) info.database = d.database;
  if (d.schema) info.schema = d.schema;
  if (d.alias) info.identifier = d.alias;
  if (d.materialized) {
    const m = normalizeEnum(NodeMaterialization, d.materialized);
    if (m && NodeMaterialization.entries.some((e) => e.short === m)) info.materialization = m;
    else {
      info.materialization = 'custom';
      info.customMaterialization = d.materialized;
    }
  }
  return info;
}
