import path from 'node:path';
import type { CommandBody } from './command.js';
import { RunlensError, UsageError } from '../errors.js';
import { plural } from '../render/plural.js';
import { claimOutput, type OutputClaim } from '../produce/output-claim.js';
import { checkOutputPlace, refuseSharedOutputs, STDOUT } from '../produce/output-path.js';
import type { TelemetrySink } from '../produce/sinks/types.js';
import { endpointHint, receiverOptions, withReceiveOptions, type ReceiveArgs } from './receive-options.js';

interface Args extends ReceiveArgs {
  db?: string;
  jsonl?: string;
  parquet?: string;
}

export const receiveCommand: CommandBody<Args> = {
  builder: (y) =>
    withReceiveOptions(y)
      .option('db', { type: 'string', describe: 'DuckDB file to write the model to (query it after with --db)' })
      .option('jsonl', { type: 'string', describe: 'also write conformant JSONL as records arrive' })
      .option('parquet', { type: 'string', describe: "also write Parquet in the engine's layout when the receiver stops" })
      .example('$0 receive --db live.duckdb', 'then run the engine with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318; Ctrl-C stops')
      .example('$0 receive --port 0 --jsonl otel.jsonl', 'a free port, and a JSONL copy of what arrives'),
  handler: async (a) => {
    const outputs = [['--db', a.db], ['--jsonl', a.jsonl], ['--parquet', a.parquet]] as const;
    // - is standard output elsewhere (-o -); receive writes files only, and a file named - is not what was meant
    for (const [flag, file] of outputs) if (file === STDOUT) throw new UsageError(`${flag} -: receive writes files, not standard output: name a file`);
    refuseSharedOutputs(outputs);
    for (const file of [a.jsonl, a.parquet]) if (file) checkOutputPlace(path.resolve(file));
    // Locked against other runlens writers until the receiver has written everything and stopped.
    const claims: Claims = {};
    try {
      if (a.jsonl) claims.jsonl = claimOutput(path.resolve(a.jsonl));
      if (a.parquet) claims.parquet = claimOutput(path.resolve(a.parquet));
      await receive(a, claims);
    } finally {
      claims.jsonl?.release();
      claims.parquet?.release();
    }
  },
};

interface Claims {
  jsonl?: OutputClaim;
  parquet?: OutputClaim;
}

/** Receive until a signal, writing the model and the claimed outputs. */
async function receive(a: Args, { jsonl, parquet }: Claims): Promise<void> {
  const [{ RunProgress }, { OtlpReceiver }, { JsonlSink }, { openModel }] = await Promise.all([
    import('../analyze/run-progress.js'), import('../ingest/otlp-receiver.js'), import('../produce/sinks/jsonl.js'), import('../store/load.js'),
  ]);
  // receiving only adds runs: a load that did not complete is said, and readers still refuse the model
  const db = await openModel(a.db, { unfinished: 'warn' });
  const sinks: TelemetrySink[] = [];
  // Paths as given (resolved), not the engine's logs/ and target/metadata/ defaults for bare names.
  if (jsonl) sinks.push(new JsonlSink({ path: jsonl.file, append: false, level: 'trace' }));
  if (parquet) sinks.push(new (await import('../produce/sinks/parquet.js')).ParquetSink({ path: parquet.file, level: 'trace' }));
  const log = (s: string) => process.stderr.write(s + '\n');
  const progress = new RunProgress(db);
  let reporting = Promise.resolve();
  const rx = new OtlpReceiver({
    db,
    ...receiverOptions(a),
    sinks,
    log,
    // a line per run as it starts and ends
    onDerived: () => {
      reporting = reporting.then(() => progress.changes()).then((lines) => lines.forEach((l) => log(`runlens: ${l}`)), () => undefined);
    },
  });
  try {
    await rx.start();
  } catch (e) {
    db.close();
    throw e;
  }
  log(`runlens: receiving OTLP/HTTP on ${rx.url} (/v1/traces, /v1/logs); point the engine at it with ${endpointHint(rx.url)}`);
  const ticker = setInterval(() => {
    if (rx.stats.requests) log(`runlens: ${rx.stats.spans} spans, ${rx.stats.logs} logs received (${rx.stats.flushedRecords} in the model)`);
  }, process.stderr.isTTY && !process.env.CI ? 2000 : 10_000);
  // The first signal stops it; one more (Ctrl-C pressed twice) must not end the process before
  // what was answered 200 is written: it is only told that the receiver is still writing.
  let stopping = false;
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (s: NodeJS.Signals) => {
      if (stopping) return log(`runlens: still writing what was received (${s} ignored)`);
      stopping = true;
      resolve(s);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  clearInterval(ticker);
  await rx.close();
  await reporting;
  db.close();
  const lost = rx.stats.lost ? `, ${rx.stats.lost} acknowledged but refused by the database (see above)` : '';
  const refused = rx.stats.refused ? `, ${plural(rx.stats.refused, 'request')} refused whole (the first: ${rx.reasons.refused})` : '';
  const repeated = rx.stats.repeated ? `, ${rx.stats.repeated} sent again (kept once)` : '';
  // an output that failed misses records answered 200: said on the stop line, and exit 2
  const failed = [...rx.sinkErrors].map(([name, e]) => `${name} (${e.message})`);
  const modelFailure = rx.stats.lost ? rx.reasons.lost : rx.reasons.closing;
  if (a.db && modelFailure) failed.unshift(`the model ${a.db} (${modelFailure})`);
  const notWritten = failed.length ? `; not written in full: ${failed.join(', ')}` : '';
  log(`runlens: stopped (${signal}): ${rx.stats.spans} spans and ${rx.stats.logs} logs received, ${rx.stats.rejected} rejected${refused}${repeated}${lost}${a.db ? `; model in ${a.db}` : ''}${notWritten}`);
  if (failed.length) throw new RunlensError('', 'input');
  if (signal === 'SIGINT') throw new RunlensError('', 'interrupted');
}
