/** Public producer API (re-exported from the package's main entry). */
export * from './record.js';
export { writeParquetFile, engineSchema, type ParquetWriteOptions } from './parquet-writer.js';
export { ATTRIBUTE_COLUMNS, TOP_COLUMNS, EVENT_MAPPINGS, splitAttributes, joinAttributes } from './parquet-layout.js';
