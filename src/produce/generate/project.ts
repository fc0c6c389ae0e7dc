/**
 * A synthetic project for `generate`: seeds, staging/intermediate/mart models, snapshots, data
 * tests and unit tests wired into a DAG the way a `build` schedules them (children of a model wait
 * for its tests; a model waits for its unit tests). Deterministic for a seed.
 */
import { hash as digest } from 'node:crypto';
import { seededRandom } from '../ids.js';
import type { NodeInfo } from '../node-attrs.js';

export type GenKind = 'seed' | 'model' | 'snapshot' | 'test' | 'unit_test';

export interface GenNode {
  index: number;
  kind: GenKind;
  info: NodeInfo;
  /** nodes that must finish RUN before this one starts (build order) */
  deps: number[];
  /** the reverse of deps */
  children: number[];
  /** for tests and unit tests: the model they belong to */
  target?: number;
  /** relative typical duration weight */
  weight: number;
  /** rendered SQL for CompiledCode and queries */
  sql: string;
}

export interface GenProject {
  name: string;
  nodes: GenNode[];
  /** topological order (every dep before its dependents) */
  order: number[];
}

const NOUNS = ['customers', 'orders', 'payments', 'products', 'stores', 'supplies', 'items', 'invoices', 'shipments', 'returns', 'refunds',
  'accounts', 'sessions', 'events', 'campaigns', 'leads', 'contracts', 'employees', 'inventory', 'vendors', 'regions', 'subscriptions', 'coupons', 'reviews'];
const COLS = ['id', 'created_at', 'status', 'amount', 'customer_id', 'order_id', 'updated_at', 'type'];

function hash(s: string, n = 64): string {
  return digest('sha256', s).slice(0, n);
}

export function buildProject(totalNodes: number, seed: number, name = 'acme'): GenProject {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const total = Math.max(4, Math.floor(totalNodes));
  const nodes: GenNode[] = [];
  const used = new Map<string, number>();
  const noun = () => {
    const base = pick(NOUNS);
    const n = (used.get(base) ?? 0) + 1;
    used.set(base, n);
    return n === 1 ? base : `${base}_${n}`;
  };
  const add = (kind: GenKind, info: Omit<NodeInfo, 'checksum'>, deps: number[], weight: number, sql: string, target?: number): GenNode => {
    const node: GenNode = { index: nodes.length, kind, info: { ...info, checksum: hash(info.uniqueId + ':' + seed) }, deps, children: [], weight, sql, target };
    nodes.push(node);
    return node;
  };

  const nSeeds = Math.max(1, Math.round(total * 0.06));
  const nSnap = Math.round(total * 0.03);
  const nUnit = Math.round(total * 0.04);
  const nModels = Math.max(1, Math.round(total * 0.45));
  const nTests = Math.max(0, total - nSeeds - nSnap - nUnit - nModels);

  const seeds: number[] = [];
  for (let i = 0; i < nSeeds; i++) {
    const t = `raw_${noun()}`;
    seeds.push(add('seed', { uniqueId: `seed.${name}.${t}`, name: t, nodeType: 'seed', materialization: 'table', database: 'analytics', schema: 'dbt_raw', identifier: t, relativePath: `seeds/${t}.csv` }, [], 2, `-- seed ${t}`).index);
  }
  const models: number[] = [];
  const modelSql = (t: string, from: string[]) =>
    `with\n\n${from.map((f, i) => `src_${i} as (\n    select * from "analytics"."dbt"."${f}"\n)`).join(',\n\n')}\n\nselect\n    ${COLS.slice(0, 3 + Math.floor(rnd() * 5)).join(',\n    ')}\nfrom src_0`;
  for (let i = 0; i < nModels; i++) {
    const layer = i < nModels * 0.4 ? 'staging' : i < nModels * 0.75 ? 'intermediate' : 'marts';
    const prefix = layer === 'staging' ? 'stg_' : layer === 'intermediate' ? 'int_' : '';
    const t = `${prefix}${noun()}`;
    let deps: number[];
    if (layer === 'staging' || models.length === 0) deps = [pick(seeds)];
    else {
      const k = 1 + Math.floor(rnd() * Math.min(3, models.length));
      const pool = layer === 'marts' ? models : models.slice(0, Math.max(1, models.length));
      deps = [...new Set(Array.from({ length: k }, () => pick(pool)))];
    }
    const mat = layer === 'staging' ? 'view' : layer === 'intermediate' ? pick(['view', 'table', 'ephemeral'] as const) : pick(['table', 'table', 'incremental'] as const);
    const sql = modelSql(t, deps.map((d) => nodes[d]!.info.identifier ?? 'x'));
    models.push(add('model', { uniqueId: `model.${name}.${t}`, name: t, nodeType: 'model', materialization: mat, database: 'analytics', schema: 'dbt', identifier: t, relativePath: `models/${layer}/${t}.sql` }, deps, layer === 'marts' ? 8 : 3, sql).index);
  }
  for (let i = 0; i < nSnap; i++) {
    const m = pick(models.slice(0, Math.max(1, Math.ceil(models.length * 0.4))));
    const t = `snap_${nodes[m]!.info.name}_${i}`;
    add('snapshot', { uniqueId: `snapshot.${name}.${t}`, name: t, nodeType: 'snapshot', materialization: 'snapshot', database: 'analytics', schema: 'snapshots', identifier: t, relativePath: `snapshots/${t}.sql` }, [m], 4, `select * from "analytics"."dbt"."${nodes[m]!.info.name}"`);
  }
  for (let i = 0; i < nUnit; i++) {
    const m = pick(models);
    const model = nodes[m]!;
    const t = `test_${model.info.name}_${['computes', 'handles', 'keeps', 'rounds'][i % 4]}_${COLS[i % COLS.length]}_${i}`;
    const u = add('unit_test', { uniqueId: `unit_test.${name}.${model.info.name}.${t}`, name: t, nodeType: 'unit_test', materialization: 'unit', database: 'analytics', schema: 'dbt', identifier: model.info.name, relativePath: model.info.relativePath!.replace(/\.sql$/, '.yml') }, [...model.deps], 1, `-- unit test ${t}`, m);
    model.deps.push(u.index);
  }
  const kinds = ['not_null', 'unique', 'accepted_values', 'relationships'] as const;
  for (let i = 0; i < nTests; i++) {
    const m = models[i % models.length]!;
    const model = nodes[m]!;
    const col = COLS[Math.floor(rnd() * COLS.length)]!;
    const k = kinds[Math.floor(rnd() * kinds.length)]!;
    const tname = `${k}_${model.info.name}_${col}${i >= models.length ? `_${i}` : ''}`;
    const uid = `test.${name}.${tname}.${hash(tname + seed, 10)}`;
    const sql = `select ${col}\nfrom "analytics"."dbt"."${model.info.name}"\nwhere ${col} is null`;
    add('test', { uniqueId: uid, name: tname, nodeType: 'test', materialization: 'test', database: 'analytics', schema: 'dbt_dbt_test__audit', identifier: tname.slice(0, 63), relativePath: model.info.relativePath!.replace(/\.sql$/, '.yml'), definedAtLine: 3 + Math.floor(rnd() * 60), definedAtCol: 6 + 2 * Math.floor(rnd() * 4) }, [m], 1, sql, m);
  }
  // build: a model's children also wait for its tests
  const testsOf = new Map<number, number[]>();
  for (const n of nodes) if (n.kind === 'test' && n.target !== undefined) (testsOf.get(n.target) ?? testsOf.set(n.target, []).get(n.target)!).push(n.index);
  for (const n of nodes) {
    if (n.kind === 'test' || n.kind === 'unit_test') continue;
    const extra: number[] = [];
    for (const d of n.deps) for (const t of testsOf.get(d) ?? []) extra.push(t);
    n.deps = [...new Set([...n.deps, ...extra])];
  }
  for (const n of nodes) for (const d of n.deps) nodes[d]!.children.push(n.index);
  return { name, nodes, order: topoOrder(nodes) };
}

function topoOrder(nodes: GenNode[]): number[] {
  const indeg = nodes.map((n) => n.deps.length);
  const queue: number[] = [];
  for (let i = 0; i < nodes.length; i++) if (indeg[i] === 0) queue.push(i);
  const out: number[] = [];
  for (let h = 0; h < queue.length; h++) {
    const i = queue[h]!;
    out.push(i);
    for (const c of nodes[i]!.children) if (--indeg[c]! === 0) queue.push(c);
  }
  if (out.length !== nodes.length) throw new Error('generated project has a cycle');
  return out;
}
