-- name: critical-path
-- summary: Per run and phase (each PhaseExecuted span), the chain of node evaluations that decided the phase's wall time, walked back from the phase's end (CRISP): each with its duration and the wait before it.
-- param: trace VARCHAR = '' -- only this run (trace id, invocation id or a prefix); empty = every run
-- The walk starts at the phase's evaluation that ended last; the link before an evaluation is the one
-- that ended last at or before it started. Ties on the end go to the one that started first (it
-- covers more of the phase), then to the smaller unique_id and span id. Evaluations that never ended
-- are left out. phase_span_id is the phase's span: a trace holding several invocations has a phase
-- of one name per invocation, each with its own chain. method: `spans` (this walk; `runlens
-- critical-path --manifest` adds the dependency path).
WITH RECURSIVE phases AS (
  SELECT trace_id, span_id, phase, start_ns, end_ns FROM spans
  WHERE kind = 'phase' AND ($trace = '' OR starts_with(trace_id, lower(replace($trace, '-', ''))))
),
ev AS MATERIALIZED (
  SELECT e.trace_id, e.parent_span_id AS phase_span, e.span_id, e.unique_id, e.resource_type, e.node_outcome, e.skip_reason,
    e.test_outcome, e.start_ns, e.end_ns,
    -- the walk's preference: a later end, then an earlier start, then the smaller ids
    row_number() OVER (PARTITION BY e.trace_id, e.parent_span_id ORDER BY e.end_ns, e.start_ns DESC, e.unique_id DESC, e.span_id DESC) AS k
  FROM spans e SEMI JOIN phases p ON p.trace_id = e.trace_id AND p.span_id = e.parent_span_id
  WHERE e.kind = 'node_evaluated' AND e.ended AND e.start_ns IS NOT NULL
),
-- per end time, the preferred evaluation ending then (k grows with the end)
ends AS (SELECT trace_id, phase_span, end_ns, max(k) AS k FROM ev GROUP BY ALL),
-- each evaluation's link before it: the preferred one that ended at or before its start; an
-- evaluation without duration links to the one ranked just below it, so the walk always moves on
links AS (
  SELECT e.trace_id, e.phase_span, e.k, least(coalesce(x.k, 0), e.k - 1) AS before
  FROM ev e ASOF LEFT JOIN ends x ON x.trace_id = e.trace_id AND x.phase_span = e.phase_span AND x.end_ns <= e.start_ns
),
-- Following the links one at a time would take a step per link (a serial phase of 20,000 nodes is a
-- chain of 20,000); pointer doubling takes a step per power of two instead. Per phase, list `jump`
-- holds at place k + 1 the place of the link before k (place 1 stands for "none" and points to
-- itself); jump level j maps each place to the one 2^j links before it.
lists AS (SELECT trace_id, phase_span, list_prepend(1, list(before + 1 ORDER BY k)) AS jump, count(*) AS n FROM links GROUP BY ALL),
jumps(trace_id, phase_span, n, level, jump) AS (
  SELECT trace_id, phase_span, n, 0, jump FROM lists
  UNION ALL
  SELECT trace_id, phase_span, n, level + 1, list_select(jump, jump) FROM jumps WHERE 2 ** (level + 1) < n
),
-- The chain from the last-ending evaluation (place n + 1): starting from it, each level from the
-- highest down adds the places 2^j links before every member, which covers every distance from 0 to
-- 2^levels - 1.
chains AS (
  SELECT trace_id, phase_span,
    list_reduce(list(jump ORDER BY level DESC), (have, jump) -> list_distinct(list_concat(have, list_select(jump, have))), [any_value(n) + 1]) AS places
  FROM jumps GROUP BY trace_id, phase_span
),
path AS (
  SELECT e.*, row_number() OVER (PARTITION BY e.trace_id, e.phase_span ORDER BY e.k) AS position,
    lag(e.end_ns) OVER (PARTITION BY e.trace_id, e.phase_span ORDER BY e.k) AS previous_end
  FROM (SELECT trace_id, phase_span, unnest(places) - 1 AS k FROM chains) c JOIN ev e USING (trace_id, phase_span, k)
)
SELECT p.trace_id, ph.phase, ph.span_id AS phase_span_id, p.position::INTEGER AS position, p.unique_id, p.resource_type, p.node_outcome, p.skip_reason, p.test_outcome,
  round((p.start_ns - ph.start_ns) / 1e6, 3) AS start_ms,
  round(greatest(0, p.start_ns - coalesce(p.previous_end, ph.start_ns)) / 1e6, 3) AS wait_ms,
  round((p.end_ns - p.start_ns) / 1e6, 6) AS duration_ms,
  round((ph.end_ns - ph.start_ns) / 1e6, 3) AS phase_ms,
  'spans' AS method, p.span_id
FROM path p JOIN phases ph ON ph.trace_id = p.trace_id AND ph.span_id = p.phase_span
LEFT JOIN runs r ON r.trace_id = p.trace_id
ORDER BY r.start_ns, p.trace_id, ph.start_ns, ph.span_id, position;
