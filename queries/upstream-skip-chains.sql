-- name: upstream-skip-chains
-- summary: Every node skipped because of an upstream failure, with the whole chain of upstream ids down to the node that errored or failed.
-- param: trace VARCHAR = '' -- only this run (trace id, invocation id or a prefix); empty = every run
WITH RECURSIVE skipped AS (
  SELECT trace_id, unique_id, upstream_unique_id FROM node_results
  WHERE skip_reason = 'upstream' AND ($trace = '' OR starts_with(trace_id, lower(replace($trace, '-', ''))))
),
chain(trace_id, unique_id, cur, path) AS (
  SELECT trace_id, unique_id, upstream_unique_id, [upstream_unique_id] FROM skipped WHERE upstream_unique_id IS NOT NULL
  UNION ALL
  -- follow skipped upstreams to the root cause; stop on cycles
  SELECT c.trace_id, c.unique_id, s.upstream_unique_id, list_append(c.path, s.upstream_unique_id)
  FROM chain c JOIN skipped s ON s.trace_id = c.trace_id AND s.unique_id = c.cur
  WHERE s.upstream_unique_id IS NOT NULL AND NOT list_contains(c.path, s.upstream_unique_id) AND len(c.path) < 1000
),
longest AS (
  SELECT trace_id, unique_id, arg_max(path, len(path)) AS path FROM chain GROUP BY ALL
)
SELECT s.trace_id, s.unique_id, coalesce(len(l.path), 0)::INTEGER AS chain_length,
  array_to_string(l.path, ' -> ') AS chain, l.path[-1] AS root_cause,
  CASE WHEN r.node_outcome = 'error' THEN 'error' WHEN r.test_outcome = 'failed' THEN 'test failed'
       WHEN r.node_outcome IS NULL AND l.path IS NOT NULL THEN 'not in the data' ELSE r.node_outcome END AS root_cause_outcome,
  CASE WHEN l.path IS NULL THEN 'upstream id not recorded' END AS note
FROM skipped s
LEFT JOIN longest l ON l.trace_id = s.trace_id AND l.unique_id = s.unique_id
LEFT JOIN node_results r ON r.trace_id = s.trace_id AND r.unique_id = l.path[-1]
ORDER BY s.trace_id, root_cause, chain_length, s.unique_id;
