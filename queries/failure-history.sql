-- name: failure-history
-- summary: Per node, how often it errored or its test failed across the recent runs of each command, and the text of its last failure.
-- param: runs INTEGER 1.. = 30 -- how many of the most recent runs of each command to read
-- param: command VARCHAR = '' -- only runs of this command (build, test, ...); empty = each command on its own
-- param: until VARCHAR = '' -- read the runs up to and including this one (trace id, invocation id or prefix); empty = up to the most recent
WITH last_run AS (SELECT start_ns, trace_id FROM runs WHERE $until <> '' AND starts_with(trace_id, lower(replace($until, '-', ''))) ORDER BY trace_id LIMIT 1),
recent AS (
  SELECT trace_id, coalesce(command, '') AS command, start_ns FROM runs
  WHERE ($command = '' OR command = $command)
    AND ($until = '' OR (start_ns, trace_id) <= (SELECT (start_ns, trace_id) FROM last_run))
  QUALIFY row_number() OVER (PARTITION BY coalesce(command, '') ORDER BY start_ns DESC, trace_id DESC) <= $runs
),
results AS (
  SELECT r.command, n.unique_id, n.resource_type, r.start_ns, r.trace_id, n.node_outcome, n.test_outcome, n.ended,
    n.node_outcome = 'error' OR n.test_outcome = 'failed' AS failed,
    -- a result without a unique_id is a node of its own: no other result can be told to be the same node
    CASE WHEN n.unique_id IS NULL THEN n.trace_id || '/' || n.span_id END AS lone,
    CASE WHEN n.node_outcome = 'error' THEN coalesce(n.error_text, 'error (no error text recorded)')
         WHEN n.test_outcome = 'failed' AND n.failing_rows IS NULL THEN 'test failed (failing rows not recorded)'
         WHEN n.test_outcome = 'failed' THEN 'test failed: ' || n.failing_rows || ' failing rows' END AS failure
  FROM node_results n JOIN recent r USING (trace_id)
),
nodes AS (
  SELECT command, unique_id, any_value(resource_type) AS resource_type, count(*) AS runs_seen,
    count(*) FILTER (WHERE node_outcome = 'error') AS errors,
    count(*) FILTER (WHERE test_outcome = 'failed') AS tests_failed,
    count(*) FILTER (WHERE failed) AS failures,
    max(start_ns) FILTER (WHERE failed) AS failed_ns,
    arg_max(trace_id, (start_ns, trace_id)) FILTER (WHERE failed) AS failed_trace,
    arg_max(failure, (start_ns, trace_id)) FILTER (WHERE failed) AS last_failure,
    arg_max(CASE WHEN NOT ended THEN 'not ended' ELSE concat_ws('/', node_outcome, test_outcome) END, (start_ns, trace_id)) AS last_result
  FROM results GROUP BY command, unique_id, lone
)
SELECT command, unique_id, resource_type, runs_seen::INTEGER AS runs_seen, errors::INTEGER AS errors, tests_failed::INTEGER AS tests_failed,
  round(100.0 * failures / runs_seen, 1) AS failure_pct, last_result,
  strftime(make_timestamp(failed_ns // 1000), '%Y-%m-%dT%H:%M:%S.%gZ') AS last_failed_at, failed_trace AS last_failed_trace, last_failure
FROM nodes
WHERE failures > 0
ORDER BY failures DESC, failed_ns DESC, command, unique_id;
