/**
 * The older engine's run-results statuses mapped onto node_outcome, skip reason and test_outcome.
 * Interface section 2A gives the core rows; the rest are documented choices (README "Status mapping").
 * This table is the only place the mapping lives: `map-status`, the legacy translator and the
 * saved queries all read it.
 */

export interface StatusMapping {
  /** the older engine's status string, as run_results.json writes it */
  readonly status: string;
  /** which resource types the row applies to: 'test' for data tests and unit tests, 'node' for the rest, 'any' */
  readonly appliesTo: 'test' | 'node' | 'any';
  /** a refinement of the status (message or command) that picks this row; absent = the plain status */
  readonly when?: 'fail_fast' | 'no_op_message' | 'compile_only' | 'freshness';
  readonly node_outcome: 'success' | 'error' | 'skipped' | 'canceled';
  readonly skip_reason: 'upstream' | 'cached' | 'noop' | null;
  readonly test_outcome: 'passed' | 'warned' | 'failed' | null;
  /** sources.json: the freshness outcome of a source whose freshness query ran */
  readonly freshness_outcome?: 'passed' | 'warned' | 'failed';
  /** interface = stated in interface section 2A; choice = a decision documented in README */
  readonly source: 'interface' | 'choice';
  readonly note: string;
}

export const STATUS_MAP: readonly StatusMapping[] = [
  { status: 'success', appliesTo: 'any', node_outcome: 'success', skip_reason: null, test_outcome: null, source: 'interface', note: 'node ran without errors' },
  { status: 'error', appliesTo: 'any', node_outcome: 'error', skip_reason: null, test_outcome: null, source: 'interface', note: 'node (or a test whose SQL failed) could not run' },
  { status: 'skipped', appliesTo: 'any', node_outcome: 'skipped', skip_reason: 'upstream', test_outcome: null, source: 'interface', note: 'a dependency failed' },
  { status: 'pass', appliesTo: 'test', node_outcome: 'success', skip_reason: null, test_outcome: 'passed', source: 'interface', note: 'test ran, no failures' },
  { status: 'warn', appliesTo: 'test', node_outcome: 'success', skip_reason: null, test_outcome: 'warned', source: 'interface', note: 'test ran, failures configured as warnings' },
  { status: 'fail', appliesTo: 'test', node_outcome: 'success', skip_reason: null, test_outcome: 'failed', source: 'interface', note: 'test ran and found failures' },
  { status: 'partial success', appliesTo: 'any', node_outcome: 'error', skip_reason: null, test_outcome: null, source: 'choice', note: 'microbatch with failed batches; counts as a failure everywhere in the older engine' },
  { status: 'reused', appliesTo: 'any', node_outcome: 'skipped', skip_reason: 'cached', test_outcome: null, source: 'choice', note: 'state-aware reuse, the cached skip of the new engine' },
  { status: 'no-op', appliesTo: 'any', node_outcome: 'skipped', skip_reason: 'noop', test_outcome: null, source: 'choice', note: 'exposures and saved queries do no work' },
  { status: 'ephemeral', appliesTo: 'any', node_outcome: 'skipped', skip_reason: 'noop', test_outcome: null, source: 'choice', note: 'ephemeral models do no work of their own (log-only in the older engine)' },
  { status: 'skipped', appliesTo: 'any', when: 'fail_fast', node_outcome: 'canceled', skip_reason: null, test_outcome: null, source: 'choice', note: '"Skipping due to fail_fast": the run was stopped, not a dependency failure' },
  { status: 'success', appliesTo: 'any', when: 'no_op_message', node_outcome: 'skipped', skip_reason: 'noop', test_outcome: null, source: 'choice', note: '1.8-1.9 saved queries: success with message NO-OP and no timing' },
  { status: 'success', appliesTo: 'any', when: 'compile_only', node_outcome: 'success', skip_reason: null, test_outcome: null, source: 'choice', note: 'compile, docs generate, show: success means compiled; tests get no test outcome' },
  { status: 'runtime error', appliesTo: 'any', node_outcome: 'error', skip_reason: null, test_outcome: null, source: 'choice', note: 'source freshness query failed' },
  { status: 'pass', appliesTo: 'node', when: 'freshness', node_outcome: 'success', skip_reason: null, test_outcome: null, freshness_outcome: 'passed', source: 'choice', note: 'source freshness passed' },
  { status: 'warn', appliesTo: 'node', when: 'freshness', node_outcome: 'success', skip_reason: null, test_outcome: null, freshness_outcome: 'warned', source: 'choice', note: 'source freshness warned (warn_after exceeded)' },
  { status: 'error', appliesTo: 'node', when: 'freshness', node_outcome: 'success', skip_reason: null, test_outcome: null, freshness_outcome: 'failed', source: 'choice', note: 'source freshness failed (error_after exceeded): the query ran, the data is stale; the gate fails on it as on an error' },
];

export const TEST_RESOURCE_TYPES = new Set(['test', 'unit_test']);

export interface StatusContext {
  resourceType?: string;
  message?: string | null;
  /** the command that wrote the results (args.which): compile, generate, show change what success means */
  command?: string;
}

export class UnknownStatusError extends Error {
  constructor(readonly status: string) {
    super(`unknown run-results status "${status}" (known: ${[...new Set(STATUS_MAP.map((m) => m.status))].join(', ')})`);
  }
}

const COMPILE_ONLY_COMMANDS = new Set(['compile', 'generate', 'docs', 'show']);

/** Whether success of `command` only means compiled; the command as typed (`docs generate`) counts by its words. */
export function isCompileOnlyCommand(command: string): boolean {
  return command.trim().toLowerCase().split(/\s+/).some((w) => COMPILE_ONLY_COMMANDS.has(w));
}

const ROWS = new Map<string, { rows: StatusMapping[]; plain: StatusMapping[] }>();
for (const m of STATUS_MAP) {
  const e = ROWS.get(m.status) ?? { rows: [], plain: [] };
  e.rows.push(m);
  if (m.when === undefined) e.plain.push(m);
  ROWS.set(m.status, e);
}

/** A status as the table spells it (any case, `_` for a space, noop for no-op); undefined when the table has no such status. */
export function tableStatus(statusIn: string): string | undefined {
  // Statuses as the artifacts write them need no normalization (a migration maps one per node).
  const status = ROWS.has(statusIn) ? statusIn : statusIn.trim().toLowerCase().replace(/_/g, ' ').replace(/^noop$/, 'no-op').replace(/^no op$/, 'no-op');
  return ROWS.has(status) ? status : undefined;
}

/** Map one older-engine status onto the new outcomes; throws UnknownStatusError for statuses not in the table. */
export function mapStatus(statusIn: string, ctx: StatusContext = {}): StatusMapping {
  const status = tableStatus(statusIn);
  if (status === undefined) throw new UnknownStatusError(statusIn);
  const rt = ctx.resourceType?.toLowerCase();
  const isTest = rt !== undefined && TEST_RESOURCE_TYPES.has(rt);
  const { rows, plain } = ROWS.get(status)!;
  const pick = (when: StatusMapping['when']) => rows.find((m) => m.when === when);
  const msg = ctx.message ?? '';
  if (status === 'skipped' && /fail_fast|fail-fast/i.test(msg)) return pick('fail_fast')!;
  if (status === 'success' && ctx.command && isCompileOnlyCommand(ctx.command)) return pick('compile_only')!;
  if (status === 'success' && msg.trim().toUpperCase() === 'NO-OP') return pick('no_op_message')!;
  if ((status === 'pass' || status === 'warn' || status === 'error') && rt === 'source') return pick('freshness')!;
  // pass/warn/fail are test statuses; given for a non-test they still mean the test outcome.
  return plain.find((m) => m.appliesTo === (isTest ? 'test' : 'node')) ?? plain.find((m) => m.appliesTo === 'any') ?? plain[0]!;
}
