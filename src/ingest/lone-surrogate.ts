/**
 * Lone surrogates: a JSON escape such as "\ud800" parses into a string that is not well-formed
 * UTF-16, which JSON.parse takes and DuckDB's JSON reader refuses. runlens refuses such strings
 * wherever they come in (JSONL and Parquet lines, OTLP, the older engine's files), naming where.
 */

export const LONE_SURROGATE = 'a string that is not well-formed UTF-16 (a lone surrogate)';

export const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Where the first string (key or value) holding a lone surrogate is in a parsed JSON value. */
export interface SurrogatePlace {
  /** its path: `results[4].message`, `info.msg` */
  path: string;
  /** the lone surrogate as its escape: `\ud83d` */
  escape: string;
  /** the unique_id of the nearest object around it that has one */
  uniqueId?: string;
}

/** Only JSON text with a `\ud` escape can hold a lone surrogate (raw UTF-8 cannot). */
export const mayHoldLoneSurrogate = (text: string): boolean => text.includes('\\ud') || text.includes('\\uD');

/** A surrogate code unit without its other half. */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const escapeOf = (s: string): string => `\\u${LONE.exec(s)![0].charCodeAt(0).toString(16)}`;

/** The first lone surrogate in `value`, parsed from JSON `text` (other text is not walked). */
export function findLoneSurrogate(value: unknown, text: string): SurrogatePlace | undefined {
  if (!mayHoldLoneSurrogate(text)) return undefined;
  const walk = (v: unknown, path: string, uniqueId: string | undefined): SurrogatePlace | undefined => {
    if (typeof v === 'string') return wellFormed(v) ? undefined : { path, escape: escapeOf(v), ...(uniqueId !== undefined && { uniqueId }) };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const found = walk(v[i], `${path}[${i}]`, uniqueId);
        if (found) return found;
      }
    } else if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const id = typeof o.unique_id === 'string' && wellFormed(o.unique_id) ? o.unique_id : uniqueId;
      for (const k of Object.keys(o)) {
        const at = path ? `${path}.${k}` : k;
        if (!wellFormed(k)) return { path: at, escape: escapeOf(k), ...(id !== undefined && { uniqueId: id }) };
        const found = walk(o[k], at, id);
        if (found) return found;
      }
    }
    return undefined;
  };
  return walk(value, '', undefined);
}

/** "a string that is not well-formed UTF-16 (a lone surrogate), in model.p.a" */
export const loneSurrogateText = (p: SurrogatePlace): string => `${LONE_SURROGATE}${p.uniqueId ? `, in ${p.uniqueId}` : ''}`;

/**
 * The first lone surrogate in a line of JSON text, as its escape (`\ud83d`), or undefined. `value`:
 * the text's JSON.parse, when the caller has it (otherwise it is parsed here, only if an escape is there).
 */
export function loneSurrogate(text: string, value?: unknown): string | undefined {
  if (!mayHoldLoneSurrogate(text)) return undefined;
  return findLoneSurrogate(value === undefined ? JSON.parse(text) : value, text)?.escape;
}

/** How a lone surrogate of a JSONL line is said, after `malformed JSON: ` or `not valid JSON: `. */
export const loneSurrogateReason = (escape: string): string => `a lone surrogate ${escape} (half of a UTF-16 pair, not a character)`;
