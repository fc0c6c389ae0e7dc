/**
 * The line the runner adds to a step's log when the telemetry the step wrote could not be stored
 * (a file that does not convert, a run closed before it was stored), and how a client reads it back:
 * the run API shows a step's log, not this reason as a field of its own.
 */
export const telemetryNotStoredNote = (path: string, reason: string): string => `[runlens] telemetry ${path} not stored: ${reason}\n`;

/**
 * The line a step's log carries from the step's end until its telemetry is stored at the run's end,
 * when it is taken out (or the note above is added). A run closed by another process, because the
 * one carrying it out stopped, still has it: that process turns it into the note above.
 */
export const telemetryPendingNote = (path: string): string => `[runlens] telemetry ${path} kept, to be stored when the run ends\n`;

const PENDING = /^\[runlens\] telemetry (.+) kept, to be stored when the run ends$/gm;

/** A step's log with each pending line turned into a not-stored note giving `reason`. */
export const pendingAsNotStored = (logs: string, reason: string): string =>
  logs.replace(PENDING, (_line, path: string) => telemetryNotStoredNote(path, reason).trimEnd());

export const hasPendingTelemetry = (logs: string): boolean => new RegExp(PENDING.source, 'm').test(logs);

/** "<path>: <reason>" from a step's log, or null when its telemetry was not refused. */
export function telemetryNotStoredReason(logs: string | null | undefined): string | null {
  const m = /^\[runlens\] telemetry (.+?) not stored: (.*)$/m.exec(logs ?? '');
  if (!m) return null;
  return m[2]!.startsWith(m[1]!) ? m[2]! : `${m[1]}: ${m[2]}`; // the reason may name the file already
}
