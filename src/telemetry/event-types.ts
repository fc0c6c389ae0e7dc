/**
 * event_type names. Real files write `v1.public.events.fusion.<category>.<Message>`; the interface
 * writes `engine` in the product segment. Any product segment is accepted: records are classified by
 * category and message name only.
 */

export const EVENT_TYPE_PREFIX = 'v1.public.events.';
export const DEFAULT_PRODUCT = 'fusion';

/** Public event types the engine is known to write: category.Message -> record kind. */
export const KNOWN_EVENTS: Record<string, 'span' | 'log'> = {
  'process.Process': 'span',
  'invocation.Invocation': 'span',
  'phase.PhaseExecuted': 'span',
  'node.NodeProcessed': 'span',
  'node.NodeEvaluated': 'span',
  'query.QueryExecuted': 'span',
  'query.ConnectionLimitWait': 'span',
  'hook.HookProcessed': 'span',
  'artifact.ArtifactWritten': 'span',
  'asset.AssetParsed': 'span',
  'generic.GenericOpExecuted': 'span',
  'generic.GenericOpItemProcessed': 'span',
  'deps.DepsAddPackage': 'span',
  'deps.DepsPackageInstalled': 'span',
  'deps.DepsAllPackagesInstalled': 'span',
  'update.PackageUpdate': 'span',
  'onboarding.OnboardingScreenShown': 'span',
  'dev.CallTrace': 'span',
  'dev.Unknown': 'span',
  'log.LogMessage': 'log',
  'log.UserLogMessage': 'log',
  'log.ProgressMessage': 'log',
  'log.StateModifiedDiff': 'log',
  'log.CompiledCode': 'log',
  'log.CompiledCodeInline': 'log',
  'log.ListItemOutput': 'log',
  'log.ShowDataOutput': 'log',
  'log.ShowResult': 'log',
  'query.AdapterConnectionOpen': 'log',
  'query.AdapterConnectionClose': 'log',
};

export function eventType(categoryDotMessage: string, product = DEFAULT_PRODUCT): string {
  return `${EVENT_TYPE_PREFIX}${product}.${categoryDotMessage}`;
}

/** `v1.public.events.<product>.node.NodeEvaluated` -> `node.NodeEvaluated` (null when not of that form). */
export function eventKey(eventTypeName: string): string | null {
  const m = /^v\d+\.(?:public|internal)\.events\.[A-Za-z0-9_-]+\.([a-z_]+\.[A-Za-z0-9_]+)$/.exec(eventTypeName);
  return m ? m[1]! : null;
}

/** The span kinds of the model's spans relation. */
export const SPAN_KINDS = ['process', 'invocation', 'phase', 'node_processed', 'node_evaluated', 'query', 'other'] as const;
export type SpanKind = (typeof SPAN_KINDS)[number];

/**
 * Depth of a span of each kind in the engine's trees (process and invocation roots, phases and node
 * results under them, evaluations under phases, queries under evaluations); `other` has none. The
 * model stores it at insert and derive writes a span's depth only where its tree differs.
 */
export const USUAL_DEPTH: Partial<Record<SpanKind, number>> = {
  process: 0, invocation: 0, phase: 1, node_processed: 1, node_evaluated: 2, query: 3,
};

/** Message name -> span kind; anything else is `other`. */
export const SPAN_KIND_BY_MESSAGE: Record<string, SpanKind> = {
  Process: 'process',
  Invocation: 'invocation',
  PhaseExecuted: 'phase',
  NodeProcessed: 'node_processed',
  NodeEvaluated: 'node_evaluated',
  QueryExecuted: 'query',
};
