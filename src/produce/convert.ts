/** JSONL <-> Parquet conversion, streaming both ways: the input's format told by content, the output's by its extension. */
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { InputError, RunlensError, UsageError, systemReason } from '../errors.js';
import { detectFile, refuseNotRegular, refuseStdin } from '../ingest/detect.js';
import { refuseOlderEngineFile } from '../legacy/sniff.js';
import { readJsonlRecords, writeJsonlFile, writeJsonlRecords } from './jsonl-io.js';
import { readParquetRecords } from './parquet-reader.js';
import { RecordFitError, writeParquetFile, type ParquetWriteOptions } from './parquet-writer.js';
import { claimOutput } from './output-claim.js';
import { formatOf, notWritten, outputFormat, refuseOutputOverInput, STDOUT, type FileFormat } from './output-path.js';
import type { JsonlRecord } from './record.js';

export { formatOf, type FileFormat };

export interface ConvertOptions extends ParquetWriteOptions {
  /** override the format guessed from the extension */
  from?: FileFormat;
  to?: FileFormat;
  /** the part of the input read so far (0..1), for a progress bar */
  onRead?: (fraction: number) => void;
}

/** Records of a telemetry file of either format, streamed. */
export function readRecords(path: string, format: FileFormat | null = formatOf(path), onRead?: (fraction: number) => void): AsyncGenerator<JsonlRecord> {
  if (format === 'parquet') return readParquetRecords(path, { onRead });
  return readJsonlRecords(path, onRead);
}

/** Convert `input` to `output` (formats from extensions unless given; `-` is JSONL on stdout). */
export async function convertFile(input: string, output: string, opts: ConvertOptions = {}): Promise<{ records: number }> {
  refuseStdin(input);
  const to = opts.to ?? outputFormat(output);
  if (output === STDOUT && to === 'parquet') throw new UsageError('Parquet cannot be written to stdout (its footer comes last); name a .parquet file');
  try {
    await access(input);
  } catch (e) {
    throw new InputError(systemReason(e), input);
  }
  refuseNotRegular(input, await stat(input));
  refuseOutputOverInput(output, [input]);
  refuseOlderEngineFile(input, 'convert converts telemetry between JSONL and Parquet');
  // told by content, as a load tells it (a gzip file named .jsonl, a Parquet file of any name)
  const from = opts.from ?? ((await detectFile(input)).format === 'parquet' ? 'parquet' : 'jsonl');
  const records = readRecords(input, from, opts.onRead);
  // (locked against other runlens writers; the writers write beside it and rename)
  const claim = output === STDOUT ? undefined : claimOutput(path.resolve(output));
  try {
    if (output === STDOUT) return { records: await writeJsonlRecords(records, process.stdout, (p) => Promise.resolve(p).catch((e: unknown) => Promise.reject(notWritten(e, output)))) };
    return to === 'parquet' ? await writeParquetFile(records, output, opts) : await writeJsonlFile(records, output);
  } catch (e) {
    // told already (an output not written names the output), or a file that cannot be written or read (a system error) names its own path
    if (e instanceof RunlensError || (e as NodeJS.ErrnoException).path) throw e;
    if (e instanceof RecordFitError && e.line !== undefined) throw new InputError(e.reason, input, e.line);
    throw new InputError((e as Error).message, input);
  } finally {
    claim?.release();
  }
}
