/** What runlens does differently when it runs as a job step of `serve` (docs/service.md). */
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';

/**
 * Set in every step's environment to the allowed list: runlens inside a step reads it to apply the
 * step check to what `record` runs, to keep `query --sql` to the model, and to keep what it reads
 * and writes in the run's folder.
 */
export const STEP_COMMANDS_VAR = 'RUNLENS_STEP_COMMANDS';

/** The allowed list when this process runs as a job step, else null. */
export function jobStepCommands(env: NodeJS.ProcessEnv = process.env): string[] | null {
  const v = env[STEP_COMMANDS_VAR];
  return v === undefined ? null : v.split(',').filter(Boolean);
}

/** `file` as the system reaches it: links followed, in the file itself or in its nearest existing folder. */
function reached(file: string): string {
  if (existsSync(file)) return realpathSync(file);
  let dir = path.dirname(path.resolve(file));
  const rest = [path.basename(file)];
  while (!existsSync(dir) && path.dirname(dir) !== dir) {
    rest.unshift(path.basename(dir));
    dir = path.dirname(dir);
  }
  return path.join(realpathSync(dir), ...rest);
}

/**
 * In a job step, a file runlens reads or writes (an input, an output, a --db model, a manifest) must
 * be in the step's working folder (`folderItself`: or be that folder, a PATH to read), the run's: elsewhere it could read another account's runs, or
 * replace the service's store or another run's files.
 */
export function refuseOutsideStep(file: string, what: string, o: { folderItself?: boolean } = {}): void {
  if (jobStepCommands() === null) return;
  const home = realpathSync(process.cwd());
  const rel = path.relative(home, reached(file));
  // the folder itself is a PATH to read (`runlens gate .`), never a file to write (its lock would be beside it)
  if ((rel === '' && !o.folderItself) || rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new UsageError(`${what} ${file}: a job step reads and writes only inside its run's folder (${home})`);
  }
}
