/**
 * The normalized outcome columns of spans, nodes and node_results (schema.ts), as the views that read
 * them (trees, the explorer, the gate) type a row.
 */
export interface OutcomeColumns {
  phase: string | null;
  node_outcome: string | null;
  skip_reason: string | null;
  upstream_unique_id: string | null;
  test_outcome: string | null;
  failing_rows: number | null;
}
