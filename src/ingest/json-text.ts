/**
 * What JSON.parse takes that is not JSON: a `\uD800`-`\uDFFF` escape without its other half (a lone
 * surrogate) names no character. DuckDB's JSON reader and the engine's serde refuse it; JSON.parse
 * makes a string that cannot be written as UTF-8.
 */

/** The escape of a surrogate, upper or lower half (a text without one is spared the walk). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** A surrogate code unit without its other half. */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The first lone surrogate in JSON text, as its escape (`\ud83d`), or undefined. `value`: the text's
 * JSON.parse, when the caller has it (otherwise it is parsed here, only if an escape is there).
 */
export function loneSurrogate(text: string, value?: unknown): string | undefined {
  if (!SURROGATE_ESCAPE.test(text)) return undefined;
  return find(value === undefined ? JSON.parse(text) : value);
}

function find(v: unknown): string | undefined {
  if (typeof v === 'string') {
    const m = LONE.exec(v);
    return m ? `\\u${m[0].charCodeAt(0).toString(16)}` : undefined;
  }
  if (v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) {
    for (const x of v) {
      const f = find(x);
      if (f) return f;
    }
    return undefined;
  }
  for (const [k, x] of Object.entries(v)) {
    const f = find(k) ?? find(x);
    if (f) return f;
  }
  return undefined;
}

/** How a lone surrogate is said, after `malformed JSON: ` or `not valid JSON: `. */
export const loneSurrogateReason = (escape: string): string => `a lone surrogate ${escape} (half of a UTF-16 pair, not a character)`;
