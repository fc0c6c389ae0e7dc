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

/**
 * A STRUCT value's fields in an object without a prototype. The node API puts them in a plain object,
 * where a field named `__proto__` sets the object's prototype instead of being a field: its value
 * was lost (or taken for the other fields). Reading every STRUCT vector here keeps such a field at any
 * depth (in a LIST, an ARRAY, a MAP or another STRUCT); json-rows.ts converts the value the same way.
 */
duckdb.DuckDBStructVector.prototype.getItem = function getItem(this: DuckDBApi.DuckDBStructVector, itemIndex: number) {
  if (!this.isItemValid(itemIndex)) return null;
  const entries = Object.create(null) as Record<string, DuckDBApi.DuckDBValue>;
  this.type.entryNames.forEach((name, e) => {
    entries[name] = this.entryVectorAt(e).getItem(itemIndex);
  });
  return new duckdb.DuckDBStructValue(entries);
};
