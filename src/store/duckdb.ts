/**
 * @duckdb/node-api, loaded with require: it is CommonJS in many files, and an ESM import makes Node
 * scan every one of them for named exports before the first statement runs, slowing every
 * command's start-up.
 */
import { createRequire } from 'node:module';
import type * as DuckDBApi from '@duckdb/node-api';

export const duckdb = createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDBApi;

/**
 * runlens needs only the extensions built in (json, parquet). DuckDB would otherwise download and
 * load one for a file it recognizes: a SQLite file given as --db would be opened through the network
 * and written to (the service's store among them).
 */
export const NO_EXTENSION_FETCH = { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' };
