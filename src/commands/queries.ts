import { existsSync } from 'node:fs';
import type { CommandBody } from './command.js';
import { findSavedQuery, integerRange, listSavedQueries, parseParamArgs, streamFreeSql, streamSavedQuery, type QueryParam, type SavedQuery } from '../analyze/queries.js';
import { UsageError } from '../errors.js';
import { jobStepCommands } from '../service/job-step.js';
import { wrap } from '../render/help.js';
import { outputWidth, renderRows, renderTable, type TableFormat } from '../render/table.js';
import { writeChunk } from '../render/write-chunk.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';
import { paramOption, valueOption } from './options.js';

export const queriesCommand: CommandBody<{ format: TableFormat }> = {
  builder: (y) =>
    y
      .option('format', { choices: ['table', 'json', 'csv'] as const, default: 'table' as const, describe: 'table: a list for people; json or csv for programs' })
      .example('$0 queries', 'names, summaries and parameters with their defaults'),
  handler: (a) => {
    const queries = listSavedQueries();
    const value = (d: string) => (d === '' ? "''" : d);
    if (a.format === 'table') {
      process.stdout.write(renderQueryList(queries, outputWidth() ?? 80));
      return;
    }
    const rows = queries.map((q) => ({
      name: q.name,
      summary: q.summary,
      parameters: q.params.map((p) => `${p.name}=${value(p.default)} (${paramDoc(p)})`).join('; '),
    }));
    process.stdout.write(renderTable({ columns: ['name', 'summary', 'parameters'], rows }, a.format));
  },
};

/** For people: each query, its summary, and each parameter in full on its own line, wrapped to the width. */
function renderQueryList(queries: SavedQuery[], width: number): string {
  const out: string[] = [];
  for (const q of queries) {
    out.push(q.name, ...wrap('    ', q.summary, width));
    const flags = q.params.map((p) => `--param ${p.name}=${p.default === '' ? "''" : p.default}`);
    const w = Math.max(0, ...flags.map((f) => f.length)) + 2;
    q.params.forEach((p, i) => out.push(...wrap(`    ${flags[i]!.padEnd(w)}`, paramDoc(p), width)));
    out.push('');
  }
  return out.join('\n');
}

/** A parameter's description, with the integers it takes where its header limits them. */
const paramDoc = (p: QueryParam): string => (p.type === 'INTEGER' && integerRange(p) ? `${p.doc} (an integer ${integerRange(p)})` : p.doc);

interface QueryArgs extends ModelArgs {
  name?: string;
  sql?: string;
  param?: string[];
  format: TableFormat;
}

export const queryCommand: CommandBody<QueryArgs> = {
  builder: (y) =>
    withModelOptions(y)
      .positional('name', { type: 'string', describe: 'a saved query (`runlens queries` lists them); omitted with --sql' })
      .option('sql', valueOption('free SQL over records, spans, nodes, node_results, runs, logs'))
      .option('param', paramOption('NAME=VALUE parameter of the saved query (with --sql: the value of $NAME)'))
      .option('format', { choices: ['table', 'json', 'csv'] as const, default: 'table' as const, describe: 'table for people (fits the terminal), json or csv for programs' })
      .example('$0 query slowest-nodes samples/failed-build.jsonl --param limit=5', 'a saved query with a parameter')
      .example('$0 query --sql "SELECT unique_id, duration_ms FROM node_results ORDER BY 2 DESC LIMIT 5" samples/two-runs.jsonl', 'free SQL over the model'),
  handler: async (a) => {
    // With --sql the first positional is a PATH, not a query name.
    const paths = a.sql ? [...(a.name ? [a.name] : []), ...(a.paths ?? [])] : (a.paths ?? []);
    if (!a.sql && !a.name) throw new UsageError('name a saved query (`runlens queries` lists them) or give --sql');
    // a saved query's name (that is no file) beside --sql: one or the other, not a PATH that is not there
    if (a.sql && a.name && !existsSync(a.name) && listSavedQueries().some((q) => q.name === a.name)) {
      throw new UsageError(`${a.name} is a saved query and --sql is free SQL: they do not go together (give one)`);
    }
    const saved = a.sql ? undefined : findSavedQuery(a.name!);
    const params = parseParamArgs(a.param);
    // A job step runs with the service's OS user: its free SQL reads the model, not the service's files.
    const inStep = Boolean(a.sql) && jobStepCommands() !== null;
    try {
      await withModel({ ...a, paths }, async (db) => {
        // off for the rest of the connection: SQL cannot turn it back on
        if (inStep) await db.run('SET enable_external_access = false');
        // free SQL binds each value as given: its $trace is whatever the SQL makes of it, not a run id
        const result = saved ? await streamSavedQuery(db, saved, params) : await streamFreeSql(db, a.sql!, params);
        // written as it is read, at the pace stdout takes it: a result of any size, and `| head` ends it
        for await (const text of renderRows(result.columns, result.chunks, a.format)) await writeChunk(process.stdout, text);
      });
    } catch (e) {
      if (inStep && e instanceof UsageError && /Permission Error/.test(e.message)) {
        throw new UsageError(`${e.message} (in a job step, --sql reads only the model: external access to files and URLs is off)`);
      }
      throw e;
    }
  },
};
