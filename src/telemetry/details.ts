/**
 * The oneof node_outcome_detail: JSONL flattens the active member to its own attribute key; the
 * Parquet json_payload tags it externally with the message name. One table for both directions.
 */
export const DETAIL_KEYS: Record<string, string> = {
  NodeSkipUpstreamDetail: 'node_skip_upstream_detail',
  NodeTestDetail: 'node_test_detail',
  NodeCacheDetail: 'node_cache_detail',
  SourceFreshnessDetail: 'node_freshness_outcome',
  NodeEvaluationDetail: 'node_evaluation_detail',
};

/** Older spellings of a variant name accepted on input. */
export const DETAIL_KEY_ALIASES: Record<string, string> = { TestEvaluationDetail: 'node_test_detail' };

export const DETAIL_VARIANT_BY_KEY: Record<string, string> = Object.fromEntries(Object.entries(DETAIL_KEYS).map(([v, k]) => [k, v]));

/**
 * The attributes the model reads that are objects (the object-valued fields of ATTR_STRUCT_FIELDS in
 * src/store/normalize-sql.ts): another JSON type there is an input error, not a value read as none.
 */
export const OBJECT_ATTRIBUTES = ['node_skip_upstream_detail', 'node_test_detail'] as const;
