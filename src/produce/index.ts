/** Public producer API (re-exported from the package's main entry). */
export * from './record.js';
export { writeParquetFile, engineSchema, type ParquetWriteOptions } from './parquet-writer.js';
export { ATTRIBUTE_COLUMNS, TOP_COLUMNS, EVENT_MAPPINGS, splitAttributes, joinAttributes } from './parquet-layout.js';
export { convertFile, readRecords, formatOf, type ConvertOptions, type FileFormat } from './convert.js';
export { readParquetRecords } from './parquet-reader.js';
export { readJsonlRecords, writeJsonlFile } from './jsonl-io.js';
export * from './writer.js';
export * from './ids.js';
export { type NodeInfo, type NodeResult, type NodeOutcomeName, type SkipReasonName } from './node-attrs.js';
export { type TelemetrySink, type Level, LEVEL_SEVERITY } from './sinks/types.js';
export { JsonlSink, jsonlSink, type JsonlSinkOptions } from './sinks/jsonl.js';
export { ParquetSink, parquetSink, type ParquetSinkOptions } from './sinks/parquet.js';
export { OtlpSink, otlpSink, type OtlpSinkOptions } from './sinks/otlp.js';
export { validateFile, validatePaths, formatIssue, type FileReport as ValidationReport, type Issue as ValidationIssue } from './validate.js';
export { generate, type GenerateOptions, type GenerateResult } from './generate/index.js';
