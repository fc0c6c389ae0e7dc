-- name: upstream-skip-chains
-- summary: Every node skipped because of an upstream failure, with the whole chain of upstream ids down to the node that errored or failed.
-- param: trace VARCHAR = '' -- only this run (trace id, invocation id or a prefix); empty = every run
WITH RECURSIVE skipped AS (
  SELECT trace_id, unique_id, upstream_unique_id FROM node_results
  WHERE skip_reason = 'upstream' AND ($trace = '' OR starts_with(trace_id, lower(replace($trace, '-', ''))))
),
-- From the nodes skipped for a node that was not itself skipped downwards: each skipped node is
-- reached once, its chain its upstream's chain with one more link.
down(trace_id, unique_id, path) AS (
  SELECT s.trace_id, s.unique_id, [s.upstream_unique_id] FROM skipped s
  WHERE s.upstream_unique_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM skipped u WHERE u.trace_id = s.trace_id AND u.unique_id = s.upstream_unique_id)
  UNION ALL
  SELECT s.trace_id, s.unique_id, list_prepend(s.upstream_unique_id, d.path)
  FROM down d JOIN skipped s ON s.trace_id = d.trace_id AND s.upstream_unique_id = d.unique_id
),
-- What no root reaches is in, or behind, a cycle of upstream ids: walk up until an id repeats.
up(trace_id, unique_id, cur, path) AS (
  SELECT s.trace_id, s.unique_id, s.upstream_unique_id, [s.upstream_unique_id] FROM skipped s
  WHERE s.upstream_unique_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM down d WHERE d.trace_id = s.trace_id AND d.unique_id = s.unique_id)
  UNION ALL
  SELECT c.trace_id, c.unique_id, s.upstream_unique_id, list_append(c.path, s.upstream_unique_id)
  FROM up c JOIN skipped s ON s.trace_id = c.trace_id AND s.unique_id = c.cur
  WHERE s.upstream_unique_id IS NOT NULL AND NOT list_contains(c.path, s.upstream_unique_id)
),
chains AS (
  SELECT trace_id, unique_id, path, false AS cycle FROM down
  UNION ALL
  SELECT trace_id, unique_id, arg_max(path, len(path)), true FROM up GROUP BY ALL
)
SELECT s.trace_id, s.unique_id, coalesce(len(l.path), 0)::INTEGER AS chain_length,
  array_to_string(l.path, ' -> ') AS chain, l.path[-1] AS root_cause,
  CASE WHEN r.node_outcome = 'error' THEN 'error' WHEN r.test_outcome = 'failed' THEN 'test failed'
       WHEN r.node_outcome IS NULL AND l.path IS NOT NULL THEN 'not in the data' ELSE r.node_outcome END AS root_cause_outcome,
  CASE WHEN l.path IS NULL THEN 'upstream id not recorded' WHEN l.cycle THEN 'the upstream ids form a cycle' END AS note
FROM skipped s
LEFT JOIN chains l ON l.trace_id = s.trace_id AND l.unique_id = s.unique_id
LEFT JOIN node_results r ON r.trace_id = s.trace_id AND r.unique_id = l.path[-1]
ORDER BY s.trace_id, root_cause, chain_length, s.unique_id;
