import type { CommandBody } from './command.js';
import { resolveTrace } from '../analyze/tree.js';
import { FoundError, InputError, UsageError, errorMessage } from '../errors.js';
import { plural } from '../render/plural.js';
import { LISTED_FOR_PEOPLE, REPORTERS, forGithubActions, renderGate, renderGateError, type Reporter } from '../gate/reporters.js';
import { DEFAULT_FAIL_ON, FAIL_ON, evaluateGate, type FailOn } from '../gate/rules.js';
import type { ReceiverStats, UnstoredReasons } from '../ingest/otlp-receiver.js';
import { everyPathAdds } from '../ingest/detect.js';
import type { Db } from '../store/db.js';
import type { LoadReport } from '../store/load.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';
import { listOption, needs, valueOption } from './options.js';
import { endpointHint, parseDuration, receiverOptions, withReceiveOptions, type ReceiveArgs } from './receive-options.js';

interface Args extends ModelArgs, ReceiveArgs {
  'fail-on'?: string[];
  trace?: string;
  reporter: Reporter;
  receive: boolean;
  'until-idle': string;
  timeout: string;
}

export const gateCommand: CommandBody<Args> = {
  builder: (y) =>
    withReceiveOptions(withModelOptions(y), 'receive')
      .option('fail-on', listOption(`what fails the gate: ${FAIL_ON.join(', ')}; default ${DEFAULT_FAIL_ON.join(',')} (docs/gate.md)`))
      .option('trace', valueOption('gate one run only (trace id, invocation id or prefix); default every run'))
      .option('reporter', { choices: REPORTERS, default: 'text' as Reporter, describe: 'text; json; github (workflow annotations); junit (XML for CI test reports); markdown (a CI job summary, e.g. >> $GITHUB_STEP_SUMMARY)' })
      .option('receive', { type: 'boolean', default: false, describe: 'gate on what a run streams over OTLP/HTTP to this process (see --port)' })
      .option('until-idle', needs('receive', { type: 'string', default: '5s', describe: 'with --receive: gate once nothing arrived for this long', coerce: duration('--until-idle') }))
      .option('timeout', needs('receive', { type: 'string', default: '30m', describe: 'with --receive: give up (exit 2) when nothing arrives within this', coerce: duration('--timeout') }))
      .group(['receive', 'until-idle', 'timeout', 'port', 'host', 'max-body-mb', 'queue-limit'], 'Live gate (--receive):')
      .example('$0 gate logs/otel.jsonl --reporter github', 'in a GitHub workflow: annotations, exit 1 on a failed test or an error')
      .example('$0 gate samples/failed-build.jsonl --fail-on error,skipped', 'also fail on skipped nodes'),
  handler: (a) => reportingErrors(a.reporter, withModel(a, async (db, report) => {
      const failOn = parseFailOn(a['fail-on']);
      everyPathHasRun(a.paths ?? [], report);
      const unread = a.receive ? await receiveUntilIdle(db, a) : undefined;
      const runs = await db.scalar<number>('SELECT count(*)::INTEGER FROM runs');
      if (runs === 0) throw new UsageError(`no runs in ${(a.paths ?? []).join(', ') || a.db || 'the input'}: nothing to gate${unread ? ` (${unread})` : ''}`);
      const trace = a.trace ? await resolveTrace(db, a.trace) : undefined;
      const everything = a.reporter === 'json' || a.reporter === 'junit';
      const result = await evaluateGate(db, {
        failOn, traceId: trace, listLimit: everything ? undefined : LISTED_FOR_PEOPLE, withTests: a.reporter === 'junit',
      });
      if (result.passed) {
        cannotPassWithSkippedLines(report);
        await cannotPassWithLinesSkippedEarlier(db, trace);
        cannotPassWithUnread(unread);
      } else if (unread) process.stderr.write(`runlens: gate: ${unread}\n`);
      const out = renderGate(result, a.reporter);
      process.stdout.write(process.env.GITHUB_ACTIONS === 'true' ? forGithubActions(out, a.reporter) : out);
      if (!result.passed) throw new FoundError('');
    }, { requireInput: !a.receive })),
};

/** A gate that could not decide still gives the reporters CI publishes a report that says why (renderGateError). */
async function reportingErrors(reporter: Reporter, gate: Promise<void>): Promise<void> {
  try {
    await gate;
  } catch (e) {
    const report = e instanceof FoundError ? undefined : renderGateError(errorMessage(e), reporter);
    if (report) process.stdout.write(report);
    throw e;
  }
}

/** A duration option checked as it is read (before any input is loaded), kept as given for messages. */
const duration = (flag: string) => (v: string): string => (parseDuration(v, flag), v);

/**
 * A PATH that adds no run (an empty file, a folder of files without telemetry records, a file whose
 * every line a lenient load skipped) would let the gate pass on what it never saw: it is an input error.
 * A file already loaded (the same content earlier, or in --db), or whose runs the model already held
 * (its records present, or only its ERROR statuses taken), holds its runs all the same.
 */
function everyPathHasRun(paths: string[], report: LoadReport): void {
  const filesOf = (arg: string) =>
    report.files.filter((f) => f.args.includes(arg)).map((f) => ({ path: f.path, adds: f.traces > 0 || f.tracesShared > 0 || f.duplicate }));
  everyPathAdds(paths, filesOf, 'no run in this input', 'no telemetry record with a trace id');
}

/**
 * A line --lenient skipped may have been the record of a failed test or an errored node: the gate
 * reports the failures it read (exit 1) but never passes such input.
 */
function cannotPassWithSkippedLines(report: LoadReport): void {
  const file = report.files.find((f) => f.skippedLines > 0);
  if (!file) return;
  const others = report.skippedLines - file.skippedLines;
  throw new InputError(
    `the gate cannot pass: ${plural(file.skippedLines, 'line')} could not be read${others ? ` (and ${others} more in other files)` : ''} and may have held a failure`,
    file.path,
  );
}

/**
 * A model an earlier `load --lenient` skipped lines into (its files table keeps how many) never
 * passes either. With --trace, only a file holding records of that run counts (or one with no record
 * at all: its lines may have been any run's).
 */
async function cannotPassWithLinesSkippedEarlier(db: Db, traceId: string | undefined): Promise<void> {
  const files = await db.all<{ path: string; skipped: number }>(
    `SELECT path, skipped_lines::INTEGER AS skipped FROM files WHERE skipped_lines > 0
     ${traceId ? 'AND (records = 0 OR file_id IN (SELECT DISTINCT file_id FROM record_rows WHERE trace_id = $t))' : ''}
     ORDER BY file_id`,
    traceId ? { t: traceId } : {},
  );
  const [file, ...others] = files;
  if (!file) return;
  const more = others.reduce((n, f) => n + f.skipped, 0);
  throw new InputError(
    `the gate cannot pass: the model holds ${plural(file.skipped, 'line')} of this file that a lenient load skipped${more ? ` (and ${more} more of other files)` : ''} and may have held a failure; load the file again once it is whole, into a new model`,
    file.path,
  );
}

/** As with skipped lines: records the receiver could not store may have been a failure's. */
function cannotPassWithUnread(unread: string | undefined): void {
  if (unread) throw new InputError(`the gate cannot pass: ${unread}; they may have held a failure`);
}

/**
 * Receive OTLP until the stream has been quiet for --until-idle, then flush into the model. Returns
 * what was sent but not stored (rejected records, requests refused whole, records the database
 * refused), said with the first reason of each, or undefined when everything was.
 */
async function receiveUntilIdle(db: Db, a: Args): Promise<string | undefined> {
  const idleMs = parseDuration(a['until-idle'], '--until-idle');
  const timeoutMs = parseDuration(a.timeout, '--timeout');
  let last = 0;
  const { OtlpReceiver } = await import('../ingest/otlp-receiver.js');
  const rx = new OtlpReceiver({
    db, ...receiverOptions(a),
    onReceive: () => (last = Date.now()),
    log: (line) => process.stderr.write(line + '\n'),
  });
  try {
    await rx.start();
  } catch (e) {
    await rx.close().catch(() => undefined);
    throw e;
  }
  process.stderr.write(`runlens: gate waiting for OTLP on ${rx.url} (${endpointHint(rx.url)}); gates after ${a['until-idle']} of quiet\n`);
  const started = Date.now();
  // a request refused whole (413, 400) is traffic too: the gate ends after the quiet that follows it
  let refused = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const t = setInterval(() => {
        const now = Date.now();
        if (rx.stats.refused !== refused) {
          refused = rx.stats.refused;
          last = now;
        }
        if (last && now - last >= idleMs) {
          clearInterval(t);
          resolve();
        } else if (!last && now - started >= timeoutMs) {
          clearInterval(t);
          reject(new UsageError(`nothing received on ${rx.url} within ${a.timeout}: nothing to gate`));
        }
      }, Math.min(200, idleMs / 4));
    });
  } finally {
    await rx.close();
  }
  return unstored(rx.stats, rx.reasons);
}

function unstored(stats: ReceiverStats, why: UnstoredReasons): string | undefined {
  const were = (n: number) => (n === 1 ? 'was' : 'were');
  const parts = [
    stats.rejected && `${plural(stats.rejected, 'record')} sent ${were(stats.rejected)} rejected (${why.rejected})`,
    stats.refused && `${plural(stats.refused, 'request')} ${were(stats.refused)} refused whole (${why.refused})`,
    stats.lost && `${plural(stats.lost, 'acknowledged record')} could not be written to the model (${why.lost})`,
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : undefined;
}

export function parseFailOn(raw: string[] | undefined): FailOn[] {
  if (!raw || raw.length === 0) return [...DEFAULT_FAIL_ON];
  const items = raw.flatMap((r) => r.split(',')).map((s) => s.trim()).filter(Boolean);
  for (const i of items) {
    if (!(FAIL_ON as readonly string[]).includes(i)) throw new UsageError(`--fail-on: unknown "${i}" (choose from ${FAIL_ON.join(', ')})`);
  }
  return [...new Set(items)] as FailOn[];
}
