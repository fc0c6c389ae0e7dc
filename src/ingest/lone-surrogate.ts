/**
 * Lone surrogates: a JSON escape such as "\ud800" parses into a string that is not well-formed
 * UTF-16. DuckDB's JSON refuses the escape and stores the character as U+FFFD, so runlens refuses
 * such strings where they come in (OTLP, the older engine's files), naming where they are.
 */

export const LONE_SURROGATE = 'a string that is not well-formed UTF-16 (a lone surrogate)';

export const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Where the first string (key or value) holding a lone surrogate is in a parsed JSON value. */
export interface SurrogatePlace {
  /** its path: `results[4].message`, `info.msg` */
  path: string;
  /** the unique_id of the nearest object around it that has one */
  uniqueId?: string;
}

/** Only JSON text with a `\ud` escape can hold a lone surrogate (raw UTF-8 cannot). */
export const mayHoldLoneSurrogate = (text: string): boolean => text.includes('\\ud') || text.includes('\\uD');

/** The first lone surrogate in `value`, parsed from JSON `text` (other text is not walked). */
export function findLoneSurrogate(value: unknown, text: string): SurrogatePlace | undefined {
  if (!mayHoldLoneSurrogate(text)) return undefined;
  const walk = (v: unknown, path: string, uniqueId: string | undefined): SurrogatePlace | undefined => {
    if (typeof v === 'string') return wellFormed(v) ? undefined : { path, ...(uniqueId !== undefined && { uniqueId }) };
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
        if (!wellFormed(k)) return { path: at, ...(id !== undefined && { uniqueId: id }) };
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
