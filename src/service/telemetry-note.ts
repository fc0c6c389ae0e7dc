/**
 * What the runner records of a step's telemetry files it has not stored: kept in the step's stored
 * record (never read back from its log, which holds what the step printed), shown as lines after
 * the step's log and, for a client, as a field of the step.
 */
export interface TelemetryNote {
  /** the file the step wrote */
  file: string;
  /** why it was not stored; null while it is kept, to be stored when the run ends */
  reason: string | null;
}

export const telemetryNotStoredNote = (path: string, reason: string): string => `[runlens] telemetry ${path} not stored: ${reason}\n`;

/**
 * The line a step's log carries from the step's end until its telemetry is stored at the run's end.
 * A run closed by another process, because the one carrying it out stopped, still has it: that
 * process turns it into the note above.
 */
export const telemetryPendingNote = (path: string): string => `[runlens] telemetry ${path} kept, to be stored when the run ends\n`;

/** The runner's lines on a step's telemetry, shown after the step's log. */
export function telemetryNoteLines(notes: readonly TelemetryNote[]): string {
  const pending = notes.filter((n) => n.reason === null).map((n) => telemetryPendingNote(n.file)).join('');
  const refused = notes.flatMap((n) => (n.reason === null ? [] : [telemetryNotStoredNote(n.file, n.reason)])).join('');
  return pending + (refused && `\n${refused}`);
}

/** "<path>: <reason>" for each file whose telemetry was not stored. */
export const telemetryNotStoredReasons = (notes: readonly TelemetryNote[]): string[] =>
  notes.flatMap((n) => (n.reason === null ? [] : [n.reason.startsWith(n.file) ? n.reason : `${n.file}: ${n.reason}`])); // the reason may name the file already
