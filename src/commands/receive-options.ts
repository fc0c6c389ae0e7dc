/** Options and helpers shared by `receive` and `gate --receive`. */
import { constants } from 'node:buffer';
import type { Argv, Options } from 'yargs';
import { UsageError } from '../errors.js';
import { needs, wholeNumber } from './options.js';

const MB = 1024 * 1024;

export interface ReceiveArgs {
  port: number;
  host: string;
  'max-body-mb': number;
  'queue-limit': number;
}

/** `flag`: the flag the options need (gate's --receive); none for `receive`, which always receives. */
export function withReceiveOptions<T>(y: Argv<T>, flag?: string) {
  const beside = <O extends Options>(o: O): O => (flag ? needs(flag, o) : o);
  return y
    .option('port', beside({ type: 'number', default: 4318, describe: 'OTLP/HTTP port (0 picks a free one)', coerce: portNumber }))
    .option('host', beside({ type: 'string', default: '127.0.0.1', describe: 'address to listen on' }))
    .option('max-body-mb', beside({ type: 'number', default: 16, describe: 'largest request body, compressed or not (413 beyond)', coerce: bodyMegabytes }))
    .option('queue-limit', beside({ type: 'number', default: 200_000, describe: 'records waiting for the database beyond which requests get 429', coerce: queueLimit }));
}

/** What a number option was given, for messages: yargs reads text that is no number as NaN. */
const given = (v: number): string => (Number.isNaN(v) ? 'something else' : String(v));

/** The largest body a Buffer holds, which a gzip body is decompressed into. */
const MAX_BODY_MB = Math.floor(constants.MAX_LENGTH / MB);

function bodyMegabytes(v: number): number {
  if (!(v > 0 && v <= MAX_BODY_MB && Math.round(v * MB) >= 1)) {
    throw new UsageError(`--max-body-mb: expected a size in MB greater than 0 (at most ${MAX_BODY_MB}), got ${given(v)}`);
  }
  return v;
}

/** 0 or less would answer every request 429, for ever. */
const queueLimit = (v: number): number => wholeNumber('--queue-limit', v, 1, { of: 'records' });

function portNumber(p: number): number {
  if (!(Number.isInteger(p) && p >= 0 && p <= 65535)) throw new UsageError(`--port: expected a port number 0..65535 (0 picks a free one), got ${given(p)}`);
  return p;
}

/** The receiver's network and queue settings from the shared options. */
export function receiverOptions(a: ReceiveArgs): { host: string; port: number; maxBodyBytes: number; maxQueuedRecords: number } {
  return { host: a.host, port: a.port, maxBodyBytes: Math.round(a['max-body-mb'] * MB), maxQueuedRecords: a['queue-limit'] };
}

/** "5s", "500ms", "2m" or plain seconds -> milliseconds. */
export function parseDuration(s: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(s.trim());
  if (!m) throw new UsageError(`${flag}: wants a duration like 5s, 500ms or 2m, got "${s}"`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

export function endpointHint(url: string): string {
  return `OTEL_EXPORTER_OTLP_ENDPOINT=${url}`;
}
