-- name: outcome-summary
-- summary: Per run: counts of node results by node_outcome, skip reason and test outcome.
-- param: trace VARCHAR = '' -- only this run (trace id, invocation id or a prefix); empty = every run
SELECT n.trace_id, r.command, n.node_outcome, n.skip_reason, n.test_outcome, count(*)::INTEGER AS nodes
FROM node_results n JOIN runs r USING (trace_id)
WHERE $trace = '' OR starts_with(n.trace_id, lower(replace($trace, '-', '')))
GROUP BY ALL
ORDER BY min(r.start_ns), n.trace_id, nodes DESC, n.node_outcome, n.skip_reason, n.test_outcome;
