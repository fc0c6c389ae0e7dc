/**
 * An output file has one writer at a time, and a writer stopped by a signal leaves nothing beside it.
 *
 * - `claimOutput(FILE)` makes FILE.lock holding this process's pid (created whole with a link, so
 *   no reader sees it empty), and refuses (exit 2, naming the pid) while a live process holds it:
 *   two writers of one file would both report success while one's records are lost. A lock whose
 *   process is gone is stale and taken over. `release()` removes it.
 * - Files written beside an output (FILE.PID.tmp, renamed over FILE when complete) are removed when
 *   the process is stopped by SIGINT, SIGTERM or SIGHUP, as are the locks, unless the command
 *   handles that signal itself (record, receive): it then ends its writing and releases them.
 */
import { createWriteStream, linkSync, lstatSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { otherFileKind } from '../file-kind.js';
import { outputLabel } from './output-path.js';
import { refuseOutsideStep } from '../service/job-step.js';
import { makeFolders } from '../folders.js';

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** A file written beside FILE, to be renamed over it (a .gz output's stays .gz: the writer compresses by name). */
export function besideFile(file: string): string {
  refuseNotAFile(file);
  return `${file}.${process.pid}.tmp${file.endsWith('.gz') ? '.gz' : ''}`;
}

/**
 * An output is put in its place by a rename, which would replace a FIFO or a device (as root,
 * /dev/null itself) with a regular file: such a path is refused before anything is written.
 */
function refuseNotAFile(file: string): void {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return; // (nothing there yet, or a path the writer reports itself)
  }
  const what = otherFileKind(st);
  if (what) throw new InputError(`${what}, not a file: an output is written beside its name and then put in its place, which would replace it; name a file`, file);
}

/** Files this process removes if a signal ends it: locks it holds and files written beside outputs. */
const pending = new Set<string>();

/** Remove a file if it is there; a path that cannot hold it (a file where a folder should be) holds nothing to remove. */
function removeQuietly(f: string): void {
  try {
    rmSync(f, { force: true });
  } catch {
    // (the writer reports the path's problem itself)
  }
}

function removePending(): void {
  for (const f of pending) removeQuietly(f);
  pending.clear();
}

function onStop(sig: NodeJS.Signals): void {
  // A command with its own handler for this signal finishes its outputs and releases them itself.
  if (process.listenerCount(sig) > 1) return;
  removePending();
  listen(false);
  // ended by the signal, as without a handler (a shell sees 128 + its number)
  process.kill(process.pid, sig);
}

let listening = false;
function listen(on: boolean): void {
  if (on === listening) return;
  listening = on;
  for (const s of STOP_SIGNALS) (on ? process.on : process.off).call(process, s, onStop);
  (on ? process.on : process.off).call(process, 'exit', removePending);
}

/** Remove `file` if a signal stops the process before the returned function is called. */
export function removeOnStop(file: string): () => void {
  pending.add(file);
  listen(true);
  return () => {
    pending.delete(file);
    if (pending.size === 0) listen(false);
  };
}

/**
 * A write stream on `file`, opened before it is handed back: a stop's cleanup runs between two steps
 * of the event loop, and an open still pending on the thread pool would make the file after it.
 * A path that cannot be opened gives the stream's error event, as createWriteStream does.
 */
export function openWriteStream(file: string, flags: 'w' | 'a' = 'w'): WriteStream {
  let fd: number;
  try {
    fd = openSync(file, flags);
  } catch {
    return createWriteStream(file, { flags });
  }
  return createWriteStream(file, { fd, flags });
}

export interface OutputClaim {
  readonly file: string;
  /** where the writer writes: the file itself, or (beside) a file renamed over it by commit() */
  readonly writePath: string;
  /** the file written beside, if any */
  readonly tmp?: string;
  /** put what was written beside in the file's place */
  commit(): void;
  /** remove the lock, and what was written beside unless committed */
  release(): void;
}

/** A pid's process runs (EPERM: it runs as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const readPid = (lock: string): number | undefined => {
  try {
    const n = Number(readFileSync(lock, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
};

/** Make FILE.lock; false when it could not be made for a reason the writer meets and reports itself. */
function takeLock(lock: string): boolean {
  const mine = `${lock}.${process.pid}`;
  makeFolders(path.dirname(lock));
  writeFileSync(mine, String(process.pid));
  try {
    for (let tries = 0; ; tries++) {
      try {
        linkSync(mine, lock);
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || tries > 5) throw e;
      }
      const holder = readPid(lock);
      if (holder !== undefined && alive(holder)) {
        const file = lock.slice(0, -'.lock'.length);
        throw new UsageError(`${outputLabel(file)} is being written by another runlens process (pid ${holder}): wait for it to end, or name another output (${outputLabel(lock)} is its lock)`);
      }
      // stale: its process is gone (removed only if it is still that one's)
      if (readPid(lock) === holder) rmSync(lock, { force: true });
    }
  } finally {
    rmSync(mine, { force: true });
  }
}

/**
 * Claim FILE (absolute, not stdout) for writing: lock it against other runlens processes; with
 * `beside`, the writer writes FILE.PID.tmp, removed if the process is stopped.
 */
export function claimOutput(file: string, o: { beside?: boolean } = {}): OutputClaim {
  refuseOutsideStep(file, 'output');
  const lock = `${file}.lock`;
  // Listen before the first file is made: a signal then waits for this synchronous claim to list
  // what it made, where without a listener it would end the process with the lock left behind.
  const hold = removeOnStop(lock);
  let locked = false;
  try {
    locked = takeLock(lock);
  } catch (e) {
    if (e instanceof UsageError) {
      hold();
      throw e;
    }
    // a folder in the way, no permission: the writer meets it opening the file and says so in its words
  }
  if (!locked) hold();
  const unlock = locked ? hold : () => undefined;
  const tmp = o.beside ? besideFile(file) : undefined;
  const untrack = tmp ? removeOnStop(tmp) : () => undefined;
  let done = false;
  return {
    file,
    writePath: tmp ?? file,
    tmp,
    commit() {
      if (tmp) renameSync(tmp, file);
    },
    release() {
      if (done) return;
      done = true;
      if (tmp) removeQuietly(tmp);
      untrack();
      if (locked && readPid(lock) === process.pid) removeQuietly(lock);
      unlock();
    },
  };
}
