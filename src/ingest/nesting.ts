/**
 * How deep a parsed JSON value nests. JSON.parse reads any depth, but JSON.stringify and the
 * recursive walks that write a value again in another form run out of call stack a few thousand
 * levels down: a value nested deeper than MAX_NESTING is refused where it would be written so,
 * and named only where it would be shown.
 */

/** Arrays and objects inside one another, counted from the record or document. */
export const MAX_NESTING = 1000;

export const TOO_DEEP = `nested deeper than ${MAX_NESTING} levels`;

/**
 * Where `value` nests deeper than MAX_NESTING, or undefined: the path of the deep part as far as
 * its second key or third step (`attributes.aaa_deep`, `links[0].attributes`, `span_name[0][0]`),
 * enough to find it. An explicit stack, not recursion: the value is deeper than the call stack reaches.
 */
export function tooDeep(value: unknown): string | undefined {
  const stack: { v: unknown; depth: number; path: string; keys: number }[] = [{ v: value, depth: 0, path: '', keys: 0 }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const { v, depth, path, keys } = top;
    if (v === null || typeof v !== 'object') continue;
    if (depth === MAX_NESTING) return path || '-';
    const grows = keys < 2 && depth < 3;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], depth: depth + 1, path: grows ? `${path}[${i}]` : path, keys });
    } else {
      const ks = Object.keys(v);
      for (let i = ks.length - 1; i >= 0; i--) {
        const k = ks[i]!;
        stack.push({ v: (v as Record<string, unknown>)[k], depth: depth + 1, path: grows ? (path ? `${path}.${k}` : k) : path, keys: keys + 1 });
      }
    }
  }
  return undefined;
}

/** A value's JSON text for a message (`got ...`); one nested too deep for JSON.stringify said as such. */
export function jsonForMessage(x: unknown): string {
  try {
    return String(JSON.stringify(x));
  } catch {
    return `${Array.isArray(x) ? 'a list' : 'an object'} ${TOO_DEEP}`;
  }
}
