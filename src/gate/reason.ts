/**
 * The reason a node or run failed, as reporters show it: the error messages the engine logged, without
 * terminal noise (ANSI codes, progress lines, backtraces) and without the repeats the engine writes
 * (the older engine logs a node's error where it happened and again in the end-of-run recap).
 */
import { cutText } from '../render/cut-text.js';

/** CSI and OSC escape sequences and two-character escapes. */
const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])/g;
/**
 * "12 of 40 ERROR creating sql view model main.x ....... [ERROR in 0.05s]": a progress line, not a
 * cause. Its status word and its dots or bracket tell it from an error that counts ("2 of 3 partitions failed [p=1]").
 */
const PROGRESS = /^\s*\d+ of \d+ (START|OK|ERROR|FAIL|PASS|WARN|SKIP|NO-OP|RUN)\b.*(\.{3,}.*|\[[^\]]*\])\s*$/;
/** A backtrace frame ("   0: __mh_execute_header") or its location line ("      at src/x.rs:10"). */
const FRAME = /^\s*(\d+: \S|at \S)/;
/** A backtrace starts with its header, or with frame 0 naming a symbol (one word: "0: column x is null" is a message). */
const BACKTRACE_START = /^\s*(0: \S+$|stack backtrace:\s*$)/;

/** Lines of one reason, at most: enough for an error and its context, not a compiled SQL dump. */
export const MAX_REASON_LINES = 30;
/** Characters of one line of a reason, at most (then "…"): a minified SQL or JSON dump is one line. */
export const MAX_LINE_CHARS = 500;

/** One message without escape codes, progress lines and backtraces; its first line unindented. */
export function cleanMessage(text: string): string {
  const out: string[] = [];
  let inBacktrace = false;
  for (const raw of text.replace(ANSI, '').replace(/\r\n?/g, '\n').split('\n')) {
    const line = raw.trimEnd();
    if (inBacktrace && (FRAME.test(line) || line === '')) continue;
    inBacktrace = BACKTRACE_START.test(line);
    if (inBacktrace || PROGRESS.test(line)) continue;
    out.push(line.length > MAX_LINE_CHARS ? `${cutText(line, MAX_LINE_CHARS)}…` : line);
  }
  while (out.length && out[0] === '') out.shift();
  while (out.length && out.at(-1) === '') out.pop();
  if (out.length) out[0] = out[0]!.trimStart();
  return out.join('\n');
}

/** Text compared for repeats: indentation and blank lines do not count. */
const normalized = (s: string) => s.split('\n').map((l) => l.trim()).filter(Boolean).join('\n');

/**
 * The messages (in the order logged) as one reason: each cleaned, a message already contained in an
 * earlier one left out (an earlier one contained in a later one gives way to it), at most
 * MAX_REASON_LINES lines.
 */
export function reasonOf(messages: readonly (string | null | undefined)[]): string {
  const kept: { text: string; norm: string }[] = [];
  for (const m of messages) {
    if (!m) continue;
    const text = cleanMessage(m);
    const norm = normalized(text);
    if (!norm || kept.some((k) => k.norm.includes(norm))) continue;
    const within = kept.findIndex((k) => norm.includes(k.norm));
    if (within >= 0) {
      kept[within] = { text, norm };
      for (let i = kept.length - 1; i > within; i--) if (norm.includes(kept[i]!.norm)) kept.splice(i, 1);
    } else kept.push({ text, norm });
  }
  const lines = kept.map((k) => k.text).join('\n').split('\n');
  if (lines.length <= MAX_REASON_LINES) return lines.join('\n');
  return [...lines.slice(0, MAX_REASON_LINES), `… ${lines.length - MAX_REASON_LINES} more line${lines.length - MAX_REASON_LINES === 1 ? '' : 's'}`].join('\n');
}
