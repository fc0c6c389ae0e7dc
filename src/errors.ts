/**
 * Typed errors. Core modules throw these; only src/cli.ts turns them into exit codes and text
 * (the table is src/exit-codes.ts).
 */

import { userPathsIn } from './store/file-path-sql.js';

export type ErrorKind = 'usage' | 'input' | 'found' | 'interrupted' | 'internal' | 'command-not-found' | 'command-not-executable';

export class RunlensError extends Error {
  constructor(
    message: string,
    readonly kind: ErrorKind,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Bad flags or arguments. */
export class UsageError extends RunlensError {
  constructor(message: string) {
    super(message, 'usage');
  }
}

/** Input that cannot be read: names the file and, where known, line and field. */
export class InputError extends RunlensError {
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
    readonly field?: string,
  ) {
    super(InputError.format(message, file, line, field), 'input');
  }

  static format(message: string, file?: string, line?: number, field?: string): string {
    const where = [file, line !== undefined ? String(line) : undefined].filter(Boolean).join(':');
    return `${where ? where + ': ' : ''}${field ? field + ': ' : ''}${message}`;
  }
}

/**
 * An output (a -o file, stdout, a --db model) that could not be written: `OUTPUT: not written (reason)`, exit 2.
 * Nothing half-written is left under its name.
 */
export class OutputError extends RunlensError {
  constructor(
    readonly output: string,
    readonly reason: string,
    /** what it means, what to do */
    then?: string,
  ) {
    super(`${output}: not written (${reason})${then ? `: ${then}` : ''}`, 'input');
  }
}

/** Why a system call on a file failed, in words (the error's code when it has no words here). */
export function systemReason(e: unknown): string {
  const err = e as NodeJS.ErrnoException | undefined;
  const code = err?.code;
  return (code && SYSTEM_REASONS[code]) ?? code ?? errorMessage(e);
}

const SYSTEM_REASONS: Record<string, string> = {
  ENOENT: 'no such file or folder', EACCES: 'permission denied', EPERM: 'permission denied', EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of the path is a file, not a folder', EEXIST: 'it already exists', ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded', EFBIG: 'file too large', EIO: 'input/output error',
  EROFS: 'the file system is read-only', EMFILE: 'too many open files', ERR_FS_EISDIR: 'it is a folder, not a file',
};

/** The gate or validation found what it looks for (exit 1); the report is already printed. */
export class FoundError extends RunlensError {
  constructor(message: string) {
    super(message, 'found');
  }
}

/** A command runlens was asked to run (record) could not start: exit 127 or 126, as a shell does. */
export class CommandStartError extends RunlensError {
  constructor(command: string, code: string | undefined) {
    super(code === 'ENOENT' ? `command not found: ${command}` : `cannot run ${command}: ${code === 'EACCES' ? 'permission denied' : code}`,
      code === 'ENOENT' ? 'command-not-found' : 'command-not-executable');
  }
}

export function errorMessage(e: unknown): string {
  return userPathsIn(e instanceof Error ? e.message : String(e));
}

/**
 * A DuckDB error about our own SQL, told without the SQL: no error class ("Invalid Input Error: "),
 * no "LINE 1: SELECT ..." context, no repeated file name. (A user's --sql keeps DuckDB's text.)
 */
export function engineMessage(e: unknown): string {
  const text = errorMessage(e)
    .replace(/\n+LINE \d+:[\s\S]*$/, '')
    .replace(/^([A-Z][A-Za-z]* )+Error: /, '')
    .replace(/ (in|at end of|of) file '[^']*'/g, '')
    .trim();
  return /^[A-Z][a-z]/.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}
