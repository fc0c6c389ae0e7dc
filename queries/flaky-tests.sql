-- name: flaky-tests
-- summary: Tests whose outcome flipped between passing and not passing (failed, warned, error) across the recent runs of each command, with the flips, failure rate, last outcome and when it last changed.
-- param: runs INTEGER 1.. = 30 -- how many of the most recent runs of each command to read
-- param: min_flips INTEGER 0.. = 2 -- report tests that flipped at least this many times
-- param: command VARCHAR = '' -- only runs of this command (build, test, ...); empty = each command on its own
-- param: until VARCHAR = '' -- read the runs up to and including this one (trace id, invocation id or prefix); empty = up to the most recent
-- Runs of the same command are runs whose `command` (the invocation's eval_args.command) is equal.
WITH last_run AS (SELECT start_ns, trace_id FROM runs WHERE $until <> '' AND starts_with(trace_id, lower(replace($until, '-', ''))) ORDER BY trace_id LIMIT 1),
recent AS (
  SELECT trace_id, coalesce(command, '') AS command, start_ns FROM runs
  WHERE ($command = '' OR command = $command)
    AND ($until = '' OR (start_ns, trace_id) <= (SELECT (start_ns, trace_id) FROM last_run))
  QUALIFY row_number() OVER (PARTITION BY coalesce(command, '') ORDER BY start_ns DESC, trace_id DESC) <= $runs
),
outcomes AS (
  -- a test's outcome in each run it ran in (skipped and unfinished tests say nothing)
  SELECT r.command, n.unique_id, n.resource_type, r.start_ns, r.trace_id,
    CASE WHEN n.node_outcome = 'error' THEN 'error' WHEN n.node_outcome = 'success' THEN coalesce(n.test_outcome, 'passed') END AS outcome
  FROM node_results n JOIN recent r USING (trace_id)
  -- (a result without a unique_id cannot be told to be the same test as another)
  WHERE n.resource_type IN ('test', 'unit_test') AND n.unique_id IS NOT NULL
),
seq AS (
  SELECT *, outcome = 'passed' AS ok,
    lag(outcome = 'passed') OVER (PARTITION BY command, unique_id ORDER BY start_ns, trace_id) AS was_ok
  FROM outcomes WHERE outcome IS NOT NULL
),
tests AS (
  SELECT command, unique_id, any_value(resource_type) AS resource_type, count(*) AS runs_seen,
    count(*) FILTER (WHERE ok <> was_ok) AS flips,
    count(*) FILTER (WHERE NOT ok) AS not_passed,
    arg_max(outcome, (start_ns, trace_id)) AS last_outcome,
    max(start_ns) FILTER (WHERE ok <> was_ok) AS changed_ns,
    arg_max(trace_id, (start_ns, trace_id)) FILTER (WHERE ok <> was_ok) AS changed_trace,
    -- oldest first: ✓ passed, ! warned, ✗ failed, E error
    string_agg(CASE outcome WHEN 'passed' THEN '✓' WHEN 'warned' THEN '!' WHEN 'failed' THEN '✗' ELSE 'E' END, '' ORDER BY start_ns, trace_id) AS history
  FROM seq GROUP BY command, unique_id
)
SELECT command, unique_id, resource_type, runs_seen::INTEGER AS runs_seen, flips::INTEGER AS flips,
  round(100.0 * not_passed / runs_seen, 1) AS failure_pct, last_outcome,
  strftime(make_timestamp(changed_ns // 1000), '%Y-%m-%dT%H:%M:%S.%gZ') AS last_changed_at, changed_trace AS last_changed_trace,
  history
FROM tests
WHERE flips >= $min_flips
ORDER BY flips DESC, failure_pct DESC, command, unique_id;
