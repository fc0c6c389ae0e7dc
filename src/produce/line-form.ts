/**
 * How a JSONL line is written, beyond the value it holds (reference/telemetry.md §2.1: one compact
 * JSON object per line): white space between tokens, and keys written twice, which JSON.parse
 * silently collapses (the last one wins) and other readers may not.
 */

export interface FormIssue {
  field: string;
  rule: string;
  /** where in the text it is (a key's opening quote) */
  at?: number;
}

export const KEY_TWICE = 'key written twice (a reader may take either value)';
const CRLF = 'a carriage return before the newline (a CRLF line end): each line ends with a newline alone';

/** The keys `text` (the text of `value`) writes twice, as dotted paths (`status.code`, `links[0].attributes.x`). */
export function keysWrittenTwice(text: string, value: unknown): string[] {
  if (writesBack(text, value)) return [];
  return keyWrittenTwiceAt(text, value).map((i) => i.field);
}

/**
 * As keysWrittenTwice, with where each second key starts in `text`. Text that writes no more keys
 * than `value` holds writes none twice: counted first, as most text of other writers (`", "`,
 * `": "`) is not JSON.stringify's and the scan of it costs more than its parse.
 */
export function keyWrittenTwiceAt(text: string, value: unknown): { field: string; at: number }[] {
  if (keysIn(text) <= membersOf(value)) return [];
  return scan(text).flatMap((i) => (i.rule === KEY_TWICE ? [{ field: i.field, at: i.at! }] : []));
}

/** How many keys valid JSON text writes: a `"` not escaped, followed by `:`, ends one. */
function keysIn(text: string): number {
  let n = 0;
  for (let q = text.indexOf('"'); q !== -1; q = text.indexOf('"', q + 1)) {
    let c = text.charCodeAt(q + 1);
    for (let j = q + 1; isSpace(c); ) c = text.charCodeAt(++j);
    if (c !== 0x3a /* : */) continue;
    let escapes = 0;
    for (let b = q - 1; text.charCodeAt(b) === 0x5c /* \ */; b--) escapes++;
    if (escapes % 2 === 0) n++;
  }
  return n;
}

/**
 * How many members the objects of a parsed value hold, nested ones too. An explicit stack, not
 * recursion: JSON.parse reads values nested deeper than the call stack reaches.
 */
function membersOf(value: unknown): number {
  let n = 0;
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) for (const x of v) stack.push(x);
    else
      for (const k in v) {
        n++;
        stack.push((v as Record<string, unknown>)[k]);
      }
  }
  return n;
}

/**
 * Does JSON.stringify write `value` back as `text`? False for a value nested deeper than it
 * reaches (it throws): such a line is scanned as any other.
 */
function writesBack(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(value) === text;
  } catch {
    return false;
  }
}

/**
 * What is wrong with how `text` writes `value` (its JSON.parse). A line that JSON.stringify writes
 * back byte for byte is compact and has no key twice: that is every line the engine writes, and
 * the check costs one stringify. Only other lines (other escapes or number forms, which are fine,
 * or the faults looked for) are scanned.
 */
export function lineFormIssues(text: string, value: unknown): FormIssue[] {
  if (writesBack(text, value)) return [];
  return scan(text);
}

interface Container {
  /** keys seen so far; null for an array */
  keys: Set<string> | null;
  /** its dotted path, '' for the line's object */
  path: string;
  /** an object's last key (the parent of a nested container) */
  key: string;
  /** an object expects a key next (after `{` or `,`) */
  wantKey: boolean;
  /** an array's element being read */
  index: number;
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

/** One pass over a line already known to be valid JSON. */
function scan(text: string): FormIssue[] {
  const out: FormIssue[] = [];
  let spaced = false;
  const stack: Container[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x22 /* " */) {
      const from = i;
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
      if (top?.keys && top.wantKey) {
        const key = JSON.parse(text.slice(from, i + 1)) as string;
        if (top.keys.has(key)) out.push({ field: top.path ? `${top.path}.${key}` : key, rule: KEY_TWICE, at: from });
        top.keys.add(key);
        top.key = key;
        top.wantKey = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const path = !top ? '' : top.keys ? (top.path ? `${top.path}.${top.key}` : top.key) : `${top.path}[${top.index}]`;
      stack.push({ keys: c === 0x7b ? new Set() : null, path, key: '', wantKey: c === 0x7b, index: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      if (top?.keys) top.wantKey = true;
      else if (top) top.index++;
    } else if (!spaced && isSpace(c)) {
      spaced = true;
      out.push({ field: '-', rule: c === 0x0d && i === text.length - 1 ? CRLF : 'white space between tokens: each line must be one compact JSON object' });
    }
  }
  return out;
}
