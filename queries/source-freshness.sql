-- name: source-freshness
-- summary: Sources checked by source freshness: status (pass, warn, error, runtime error), max_loaded_at, the age measured and the criteria, worst and stalest first.
-- param: trace VARCHAR = '' -- only this run (trace id, invocation id or a prefix); empty = every run
WITH src AS (
  SELECT n.*,
    -- attributes as written (JSONL), or with the engine Parquet layout's json_payload merged in
    CASE WHEN json_exists(d.attributes, '$.json_payload') THEN json_merge_patch(d.attributes, json_extract_string(d.attributes, '$.json_payload')) ELSE d.attributes END AS a
  FROM node_results n JOIN span_details d ON d.trace_id = n.trace_id AND d.span_id = n.span_id
  WHERE n.resource_type = 'source' AND ($trace = '' OR starts_with(n.trace_id, lower(replace($trace, '-', ''))))
)
SELECT trace_id, unique_id AS source,
  CASE WHEN node_outcome = 'error' THEN 'runtime error'
       WHEN freshness_outcome = 'failed' THEN 'error'
       WHEN freshness_outcome = 'warned' THEN 'warn'
       WHEN freshness_outcome = 'passed' THEN 'pass'
       ELSE node_outcome END AS status,
  json_extract_string(a, '$.max_loaded_at') AS max_loaded_at,
  TRY_CAST(coalesce(json_extract_string(a, '$.node_freshness_outcome.age_seconds'), json_extract_string(a, '$.node_outcome_detail.NodeFreshnessOutcome.age_seconds')) AS BIGINT) AS age_s,
  json_extract_string(a, '$.freshness_criteria') AS criteria,
  error_text
FROM src
ORDER BY CASE status WHEN 'runtime error' THEN 0 WHEN 'error' THEN 1 WHEN 'warn' THEN 2 ELSE 3 END, age_s DESC NULLS LAST, trace_id, source;
