-- name: failed-tests
-- summary: Tests that ran and found failures (test_outcome failed), with failing_rows and file; tests that could not run (node_outcome error) follow.
-- param: trace VARCHAR = '' -- only this run (trace id, invocation id or a prefix); empty = every run
SELECT trace_id, unique_id, resource_type,
  CASE WHEN test_outcome = 'failed' THEN 'failed' ELSE 'error' END AS outcome,
  failing_rows, relative_path AS file, phase, round(duration_ms, 3) AS duration_ms, error_text
FROM node_results
WHERE resource_type IN ('test', 'unit_test')
  AND (test_outcome = 'failed' OR node_outcome = 'error')
  AND ($trace = '' OR starts_with(trace_id, lower(replace($trace, '-', ''))))
ORDER BY outcome DESC, trace_id, unique_id;
