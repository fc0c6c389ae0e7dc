/**
 * The line the runner adds to a step's log when the telemetry the step wrote could not be stored
 * (a JSONL file that does not convert), and how a client reads it back: the run API shows a step's
 * log, not this reason as a field of its own.
 */
export const telemetryNotStoredNote = (path: string, reason: string): string => `[runlens] telemetry ${path} not stored: ${reason}\n`;

/** "<path>: <reason>" from a step's log, or null when its telemetry was not refused. */
export function telemetryNotStoredReason(logs: string | null | undefined): string | null {
  const m = /^\[runlens\] telemetry (.+?) not stored: (.*)$/m.exec(logs ?? '');
  if (!m) return null;
  return m[2]!.startsWith(m[1]!) ? m[2]! : `${m[1]}: ${m[2]}`; // the reason may name the file already
}
