-- name: slowest-nodes
-- summary: The slowest nodes: overall (one result per node per run) and per phase (each evaluation).
-- param: limit INTEGER 1..999999 = 10 -- rows per scope (overall, and each phase)
-- param: trace VARCHAR = '' -- only this run (trace id, invocation id or a prefix); empty = every run
WITH picked AS (
  SELECT trace_id FROM runs
  WHERE $trace = '' OR starts_with(trace_id, lower(replace($trace, '-', '')))
),
overall AS (
  -- top-N first (a sort of every node per query cost most of the time), then ranked
  SELECT 'overall' AS scope, *, row_number() OVER (ORDER BY duration_ms DESC, unique_id, trace_id) AS rank
  FROM (SELECT trace_id, unique_id, resource_type, phase, node_outcome, test_outcome, duration_ms
        FROM node_results WHERE duration_ms IS NOT NULL AND trace_id IN (SELECT trace_id FROM picked)
        ORDER BY duration_ms DESC, unique_id, trace_id LIMIT $limit)
),
evaluations AS (
  SELECT trace_id, unique_id, resource_type, phase, node_outcome, test_outcome, duration_ms, span_id
  FROM nodes WHERE kind = 'evaluated' AND duration_ms IS NOT NULL AND trace_id IN (SELECT trace_id FROM picked)
),
-- each phase's N-th longest duration: only evaluations at or above it are ranked (ties kept)
cut AS (SELECT phase, list_min(max(duration_ms, $limit)) AS ms FROM evaluations GROUP BY phase),
per_phase AS (
  -- a node evaluated twice in a phase (a trace of several invocations): what each says, then its span, tells ties apart
  SELECT 'phase:' || coalesce(e.phase, '?') AS scope, e.* EXCLUDE (span_id),
    row_number() OVER (PARTITION BY e.phase ORDER BY e.duration_ms DESC, e.unique_id, e.trace_id, e.node_outcome, e.test_outcome, e.span_id) AS rank
  FROM evaluations e JOIN cut c ON c.phase IS NOT DISTINCT FROM e.phase
  WHERE e.duration_ms >= c.ms
)
SELECT scope, rank::INTEGER AS rank, unique_id, resource_type, phase, node_outcome, test_outcome,
  round(duration_ms, 3) AS duration_ms, trace_id
FROM (SELECT * FROM overall UNION ALL SELECT * FROM per_phase)
WHERE rank <= $limit
ORDER BY scope <> 'overall', scope, rank;
