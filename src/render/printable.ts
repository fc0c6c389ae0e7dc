/**
 * Telemetry text is untrusted: printed as it is, a span name holding escape sequences could clear the
 * screen, set the window title or write over other rows (a CI log renders them too). Text output
 * shows control characters as visible escapes instead.
 */

/** C0 controls but LF and TAB, DEL, and C1 controls. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Any control character, line breaks and tabs too: most text has none, and is returned as it is. */
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Control characters as `\xNN`; line breaks and tabs kept. */
export const printable = (s: string): string =>
  ANY_CONTROL.test(s) ? s.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`) : s;

/** One line of output: line breaks shown as ⏎, tabs as spaces, other control characters as `\xNN`. */
export const printableLine = (s: string): string =>
  ANY_CONTROL.test(s) ? printable(s.replace(/\s*(\r\n|\n)\s*/g, ' ⏎ ').replaceAll('\t', ' ')) : s;
