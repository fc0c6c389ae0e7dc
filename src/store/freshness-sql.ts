/**
 * Source freshness outcomes in SQL, for the nodes views and the runs table (a stale source fails its
 * run as the gate says it does).
 */
import { attributesOfRows } from './attributes-join.js';

/**
 * A record's SourceFreshnessDetail: in its attributes (JSONL), or in the json_payload of the engine's
 * Parquet layout, under node_outcome_detail on a NodeProcessed and at the top on a NodeEvaluated.
 */
const freshnessDetail = (attributes: string) => {
  const payload = `json_extract_string(${attributes}, '$.json_payload')`;
  return `coalesce(json_extract(${attributes}, '$.node_freshness_outcome'),
  json_extract(${payload}, '$.node_outcome_detail.NodeFreshnessOutcome'), json_extract(${payload}, '$.NodeFreshnessOutcome'))`;
};

/**
 * A source's freshness outcome (passed, warned, failed) from its SourceFreshnessDetail (JSON), NULL
 * without one; the detail's zero value (absent) is passed. Constant names, short names and numbers.
 */
function freshnessOutcome(detail: string): string {
  const v = `upper(coalesce(json_extract_string(${detail}, '$.node_freshness_outcome'), ''))`;
  return `CASE WHEN ${detail} IS NULL THEN NULL ELSE CASE ${v} WHEN '' THEN 'passed' WHEN '0' THEN 'passed' WHEN '1' THEN 'warned' WHEN '2' THEN 'failed'
    ELSE lower(regexp_replace(${v}, '^(SOURCE_FRESHNESS_OUTCOME_)?(OUTCOME_)?', '')) END END`;
}

/** (trace_id, span_id, freshness_outcome) of the records whose row ids `rowids` selects (sources: few), their attributes read for them alone. */
export const sourceFreshness = (rowids: string): string => `
  SELECT r.trace_id, r.span_id, ${freshnessOutcome(freshnessDetail('a.attributes'))} AS freshness_outcome
  FROM record_rows r JOIN ${attributesOfRows(rowids)} a ON a.record_rowid = r.rowid`;
