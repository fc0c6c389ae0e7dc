/**
 * Telemetry text is untrusted: printed as it is, a span name holding escape sequences could clear the
 * screen, set the window title or write over other rows (a CI log renders them too), and a bidi
 * override could draw the rest of its line backwards ("Trojan Source"). Text output shows control
 * characters as visible escapes instead.
 */

/**
 * C0 controls but LF and TAB, DEL, C1 controls, bidi embeddings/overrides/isolates and marks, line and
 * paragraph separators, and characters that print as nothing (zero-width space, word joiner, byte
 * order mark: two ids differing by one would look alike). The joiners that shape scripts and emoji
 * (U+200C, U+200D) are kept.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029\ufeff]/g;

/** Any of those, line breaks and tabs too: most text has none, and is returned as it is. */
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029\ufeff]/;

const escaped = (c: string): string => {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** Control characters as `\xNN` (`\uNNNN` past U+00FF); line breaks and tabs kept. */
export const printable = (s: string): string => (ANY_CONTROL.test(s) ? s.replace(CONTROL, escaped) : s);

/** One line of output: line breaks shown as ⏎, tabs as spaces, other control characters as `\xNN`. */
export const printableLine = (s: string): string =>
  ANY_CONTROL.test(s) ? printable(s.replace(/\s*(\r\n|\n)\s*/g, ' ⏎ ').replaceAll('\t', ' ')) : s;
