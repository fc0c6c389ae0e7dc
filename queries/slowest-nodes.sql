-- name: slowest-nodes
-- summary: The slowest nodes: overall (one result per node per run) and per phase (each evaluation).
-- param: limit INTEGER = 10 -- rows per scope (overall, and each phase)
-- param: trace VARCHAR = '' -- only this run (trace id, invocation id or a prefix); empty = every run
WITH picked AS (
  SELECT trace_id FROM runs
  WHERE $trace = '' OR starts_with(trace_id, lower(replace($trace, '-', '')))
),
overall AS (
  SELECT 'overall' AS scope, trace_id, unique_id, resource_type, phase, node_outcome, test_outcome, duration_ms,
    row_number() OVER (ORDER BY duration_ms DESC, unique_id) AS rank
  FROM node_results WHERE duration_ms IS NOT NULL AND trace_id IN (SELECT trace_id FROM picked)
),
per_phase AS (
  SELECT 'phase:' || coalesce(phase, '?') AS scope, trace_id, unique_id, resource_type, phase, node_outcome, test_outcome,
    duration_ms, row_number() OVER (PARTITION BY phase ORDER BY duration_ms DESC, unique_id) AS rank
  FROM nodes WHERE kind = 'evaluated' AND duration_ms IS NOT NULL AND trace_id IN (SELECT trace_id FROM picked)
)
SELECT scope, rank::INTEGER AS rank, unique_id, resource_type, phase, node_outcome, test_outcome,
  round(duration_ms, 3) AS duration_ms, trace_id
FROM (SELECT * FROM overall UNION ALL SELECT * FROM per_phase)
WHERE rank <= $limit
ORDER BY scope <> 'overall', scope, rank;
