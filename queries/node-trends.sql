-- name: node-trends
-- summary: Per node, its duration over the recent runs of each command: runs seen, median, p95, the last run's duration and its ratio to the median, flagged when it regressed, with a sparkline (oldest first).
-- param: runs INTEGER 1.. = 30 -- how many of the most recent runs of each command to read
-- param: threshold DOUBLE = 50 -- flag a node whose last duration is more than this many percent above its median
-- param: min_ms DOUBLE = 0 -- leave out nodes whose median and last duration are both below this
-- param: command VARCHAR = '' -- only runs of this command (build, test, ...); empty = each command on its own
-- param: until VARCHAR = '' -- read the runs up to and including this one (trace id, invocation id or prefix); empty = up to the most recent
-- A node's durations are those of the runs in which it ran (node_outcome success): skipped, cached and
-- failed evaluations do not say how long its work takes.
WITH last_run AS (SELECT start_ns, trace_id FROM runs WHERE $until <> '' AND starts_with(trace_id, lower(replace($until, '-', ''))) ORDER BY trace_id LIMIT 1),
recent AS (
  SELECT trace_id, coalesce(command, '') AS command, start_ns FROM runs
  WHERE ($command = '' OR command = $command)
    AND ($until = '' OR (start_ns, trace_id) <= (SELECT (start_ns, trace_id) FROM last_run))
  QUALIFY row_number() OVER (PARTITION BY coalesce(command, '') ORDER BY start_ns DESC, trace_id DESC) <= $runs
),
ran AS (
  SELECT r.command, n.unique_id, n.resource_type, n.duration_ms, r.start_ns, r.trace_id
  FROM node_results n JOIN recent r USING (trace_id)
  -- (a result without a unique_id cannot be told to be the same node as another)
  WHERE n.node_outcome = 'success' AND n.duration_ms IS NOT NULL AND n.unique_id IS NOT NULL
),
stats AS (
  SELECT command, unique_id, any_value(resource_type) AS resource_type, count(*) AS runs_seen,
    quantile_cont(duration_ms, [0.5, 0.95]) AS quantiles,
    arg_max(duration_ms, (start_ns, trace_id)) AS last_ms, max(start_ns) AS last_ns, arg_max(trace_id, (start_ns, trace_id)) AS last_trace,
    -- sorted per node: an ordered aggregate sorts every row of the query at once
    max(duration_ms) AS max_ms, list_transform(list_sort(list((start_ns, trace_id, duration_ms))), r -> r[3]) AS series
  FROM ran GROUP BY command, unique_id
),
per_node AS (SELECT * EXCLUDE (quantiles), quantiles[1] AS median_ms, quantiles[2] AS p95_ms FROM stats)
SELECT command, unique_id, resource_type, runs_seen::INTEGER AS runs_seen, round(median_ms, 3) AS median_ms, round(p95_ms, 3) AS p95_ms,
  round(last_ms, 3) AS last_ms, CASE WHEN median_ms > 0 THEN round(last_ms / median_ms, 2) END AS ratio,
  coalesce(median_ms > 0 AND last_ms * 100 > median_ms * (100 + $threshold), false) AS regressed,
  -- each run's duration as one of eight heights, from zero to the node's longest
  array_to_string(list_transform(series, d -> CASE WHEN max_ms > 0 THEN substr('▁▂▃▄▅▆▇█', greatest(1, ceil(8 * d / max_ms))::INTEGER, 1) ELSE '▁' END), '') AS trend,
  strftime(make_timestamp(last_ns // 1000), '%Y-%m-%dT%H:%M:%S.%gZ') AS last_at, last_trace
FROM per_node
WHERE greatest(median_ms, last_ms) >= $min_ms
ORDER BY regressed DESC, ratio DESC NULLS LAST, command, unique_id;
