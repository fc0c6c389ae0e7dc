-- name: run-diff
-- summary: Two runs compared: nodes whose outcome changed, that appeared or vanished, or whose duration changed by more than a percentage.
-- param: base VARCHAR = '' -- the run compared from (trace id, invocation id or prefix); empty = the run that started just before head
-- param: head VARCHAR = '' -- the run compared to; empty = the most recent run. Both given: compared as given, in either order
-- param: threshold DOUBLE = 50 -- report a duration change above this many percent
-- param: min_ms DOUBLE = 0 -- ignore duration changes of nodes faster than this in both runs
-- requires: 2 runs
WITH ordered AS (SELECT trace_id, row_number() OVER (ORDER BY start_ns DESC, trace_id DESC) AS recency FROM runs),
h AS (SELECT coalesce((SELECT min(trace_id) FROM runs WHERE $head <> '' AND starts_with(trace_id, lower(replace($head, '-', '')))),
                      (SELECT trace_id FROM ordered WHERE recency = 1 AND $head = '')) AS id),
b AS (SELECT coalesce((SELECT min(trace_id) FROM runs WHERE $base <> '' AND starts_with(trace_id, lower(replace($base, '-', '')))),
                      (SELECT o.trace_id FROM ordered o, ordered oh WHERE $base = '' AND oh.trace_id = (SELECT id FROM h) AND o.recency = oh.recency + 1)) AS id),
-- A run compared with itself has no differences: "no rows" would read as "nothing changed".
pair AS (
  SELECT CASE
      WHEN b.id = h.id AND $head = '' THEN error('run-diff: base ' || b.id || ' is the newest run: no later run to compare it with; give head')
      WHEN b.id = h.id THEN error('run-diff: base and head are the same run ' || b.id || ': name two runs')
      WHEN b.id IS NULL AND h.id IS NOT NULL AND $base = '' THEN error('run-diff: head ' || h.id || ' is the earliest run: no run before it to compare it with; give base')
      ELSE b.id END AS base,
    h.id AS head
  FROM b, h
),
old AS (SELECT * FROM node_results WHERE trace_id = (SELECT base FROM pair)),
new AS (SELECT * FROM node_results WHERE trace_id = (SELECT head FROM pair)),
joined AS (
  SELECT coalesce(n.unique_id, o.unique_id) AS unique_id, coalesce(n.resource_type, o.resource_type) AS resource_type,
    -- a result that did not end (a run cut off while the node ran) says so, not nothing
    CASE WHEN NOT o.ended THEN 'not ended' ELSE concat_ws('/', o.node_outcome, o.skip_reason, o.test_outcome) END AS base_result,
    CASE WHEN NOT n.ended THEN 'not ended' ELSE concat_ws('/', n.node_outcome, n.skip_reason, n.test_outcome) END AS head_result,
    -- (by the run's side, not the id: a result without a unique_id matches none)
    o.duration_ms AS base_ms, n.duration_ms AS head_ms, o.trace_id IS NULL AS appeared, n.trace_id IS NULL AS vanished
  FROM old o FULL OUTER JOIN new n ON n.unique_id = o.unique_id
)
SELECT CASE WHEN appeared THEN 'appeared' WHEN vanished THEN 'vanished'
            WHEN base_result IS DISTINCT FROM head_result THEN 'outcome changed' ELSE 'duration changed' END AS change,
  unique_id, resource_type, nullif(base_result, '') AS base_result, nullif(head_result, '') AS head_result,
  round(base_ms, 3) AS base_ms, round(head_ms, 3) AS head_ms,
  CASE WHEN base_ms > 0 THEN round(100 * (head_ms - base_ms) / base_ms, 1) END AS duration_change_pct,
  (SELECT base FROM pair) AS base_trace, (SELECT head FROM pair) AS head_trace
FROM joined
WHERE appeared OR vanished OR base_result IS DISTINCT FROM head_result
   OR (base_ms IS NOT NULL AND head_ms IS NOT NULL AND greatest(base_ms, head_ms) >= $min_ms
       AND (base_ms = 0 AND head_ms > 0 OR base_ms > 0 AND abs(head_ms - base_ms) * 100 / base_ms > $threshold))
-- outcome changes first: they are what a reader of a diff looks for
ORDER BY CASE change WHEN 'outcome changed' THEN 0 WHEN 'appeared' THEN 1 WHEN 'vanished' THEN 2 ELSE 3 END, unique_id;
