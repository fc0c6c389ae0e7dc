/** A bad line of an input and how many are listed: no imports, so that light commands (record, migrate's --help) can use them. */

/** A line a load cannot take, and why (field: the envelope field at fault, if one is). */
export interface BadLine {
  line: number;
  field?: string;
  reason: string;
}

/** Bad lines listed with their reasons; the others are counted and kept as line ranges. */
export const LISTED_BAD_LINES = 20;
