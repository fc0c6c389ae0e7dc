import type { ArgumentsCamelCase, Argv } from 'yargs';

/**
 * What a command module exports: its options (builder) and what it does (handler). Its name, usage
 * and one-line description live in the registry (./index.ts), so listing the commands loads none of
 * them. A module keeps its top-level imports light (yargs types, errors, small constants) and loads
 * heavy code (DuckDB, fastify, ink, parquet) inside the handler, so `runlens CMD --help` stays quick.
 */
export interface CommandBody<A> {
  builder: (y: Argv<object>) => Argv<A>;
  handler: (a: ArgumentsCamelCase<A>) => void | Promise<void>;
}
