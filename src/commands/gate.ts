import type { CommandModule } from 'yargs';
import { resolveTrace } from '../analyze/tree.js';
import { FoundError, UsageError } from '../errors.js';
import { REPORTERS, renderGate, type Reporter } from '../gate/reporters.js';
import { DEFAULT_FAIL_ON, FAIL_ON, evaluateGate, type FailOn } from '../gate/rules.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';

interface Args extends ModelArgs {
  'fail-on'?: string[];
  trace?: string;
  reporter: Reporter;
}

export const gateCommand: CommandModule<object, Args> = {
  command: 'gate [paths..]',
  describe: 'CI gate: exit 1 when a test failed or a node errored (see --fail-on), 0 when clean, 2 when the input cannot be read',
  builder: (y) =>
    withModelOptions(y)
      .option('fail-on', {
        type: 'string',
        array: true,
        describe: `what fails the gate (comma or space separated): ${FAIL_ON.join(', ')}; default ${DEFAULT_FAIL_ON.join(',')}`,
      })
      .option('trace', { type: 'string', describe: 'gate one run only (trace id, invocation id or prefix); default every run' })
      .option('reporter', { choices: REPORTERS, default: 'text' as Reporter, describe: 'output format' }),
  handler: (a) =>
    withModel(a, async (db) => {
      const failOn = parseFailOn(a['fail-on']);
      const runs = await db.scalar<number>('SELECT count(*)::INTEGER FROM runs');
      if (runs === 0) throw new UsageError(`no runs in ${(a.paths ?? []).join(', ') || a.db || 'the input'}: nothing to gate`);
      const trace = a.trace ? await resolveTrace(db, a.trace) : undefined;
      const result = await evaluateGate(db, failOn, trace);
      process.stdout.write(renderGate(result, a.reporter));
      if (!result.passed) throw new FoundError('');
    }),
};

export function parseFailOn(raw: string[] | undefined): FailOn[] {
  if (!raw || raw.length === 0) return [...DEFAULT_FAIL_ON];
  const items = raw.flatMap((r) => r.split(',')).map((s) => s.trim()).filter(Boolean);
  for (const i of items) {
    if (!(FAIL_ON as readonly string[]).includes(i)) throw new UsageError(`--fail-on: unknown "${i}" (choose from ${FAIL_ON.join(', ')})`);
  }
  return [...new Set(items)] as FailOn[];
}
