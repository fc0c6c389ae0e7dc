/** Public producer API (re-exported from the package's main entry). */
export * from './record.js';
export { writeParquetFile, engineSchema, type ParquetWriteOptions } from './parquet-writer.js';
export { ATTRIBUTE_COLUMNS, TOP_COLUMNS, EVENT_MAPPINGS, splitAttributes, joinAttributes } from './parquet-layout.js';
export { convertFile, readRecords, formatOf, type ConvertOptions, type FileFormat } from './convert.js';
export { readParquetRecords } from './parquet-reader.js';
export { readJsonlRecords, writeJsonlFile } from './jsonl-io.js';
