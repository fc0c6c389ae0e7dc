import type { ErrorKind } from './errors.js';

/** The one exit-code table (DESIGN.md "Command contract"). */
export const EXIT = {
  ok: 0,
  /** the gate or validation found what it looks for */
  found: 1,
  /** bad usage or unreadable input */
  usage: 2,
  input: 2,
  internal: 2,
  interrupted: 130,
  /** as a shell: the command to run (record -- CMD) was not found, or could not be executed */
  'command-not-found': 127,
  'command-not-executable': 126,
} as const;

export function exitCodeFor(kind: ErrorKind): number {
  return EXIT[kind];
}
