/** SQL text built from trusted parts, without DuckDB (importable by code that must stay light to load). */

/** Quote a string literal for SQL built from trusted parts (paths); parameters are used wherever DuckDB allows them. */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/**
 * `expr IN (values...)` for the per-row paths of an insert. DuckDB rewrites an IN list of five or
 * more constants into a join, and a join in an INSERT's plan makes it give up the order-preserving
 * (batch) insert: rows of a file with several row groups or JSON chunks would land out of order, and
 * a record's `line` would be wrong. An OR of equalities keeps the insert ordered.
 */
export function sqlIn(expr: string, values: readonly string[]): string {
  return `(${values.map((v) => `${expr} = ${sqlString(v)}`).join(' OR ')})`;
}

/**
 * The order in which log texts of one node or run are joined: by time, then (logs of the same
 * instant) by their text, so that the answer never follows the order the inputs came in.
 */
export const LOG_TEXT_ORDER = 'time_ns, body';
