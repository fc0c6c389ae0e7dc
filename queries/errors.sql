-- name: errors
-- summary: Node errors (node_outcome error) with the text of their ERROR log records.
-- param: trace VARCHAR = '' -- only this run (trace id, invocation id or a prefix); empty = every run
SELECT trace_id, unique_id, resource_type, phase, relative_path AS file, error_text
FROM node_results
WHERE node_outcome = 'error' AND ($trace = '' OR starts_with(trace_id, lower(replace($trace, '-', ''))))
ORDER BY trace_id, unique_id;
