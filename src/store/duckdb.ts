/**
 * @duckdb/node-api, loaded with require: it is CommonJS in many files, and an ESM import makes Node
 * scan every one of them for named exports before the first statement runs, slowing every
 * command's start-up.
 */
import { createRequire } from 'node:module';
import type * as DuckDBApi from '@duckdb/node-api';

export const duckdb = createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDBApi;
