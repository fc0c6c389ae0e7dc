/**
 * Two clients at once against one receiver: the engine's stream (our OTLP sink, the official
 * exporters) and a client sending poison (wrong JSON types, numeric names, bad attribute keys, times
 * beyond 64 bits, damaged protobuf) mixed with valid spans. Whatever the poison, every span and log
 * the valid client sent is stored, everything acknowledged is stored, nothing twice.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OtlpReceiver } from '../../src/ingest/otlp-receiver.js';
import { otlpRoot } from '../../src/otlp/decode.js';
import { readRecords } from '../../src/produce/convert.js';
import { generate } from '../../src/produce/generate/index.js';
import { seededRandom } from '../../src/produce/ids.js';
import { OtlpSink } from '../../src/produce/sinks/otlp.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';
import { FUSION, sample, samplesNote } from '../helpers/samples.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Values of every JSON type, and strings the model cannot keep. */
const ODD: unknown[] = [5, -1, 1.5, true, false, null, {}, [], { a: { b: 1 } }, [1, 'x'], 'x', '', '\ud800', '99999999999999999999', '-5', 'zz'];

type Json = Record<string, unknown>;

/** A valid OTLP/JSON span of the poison client; span ids carry the request number. */
function validSpan(req: number, n: number, trace: string): Json {
  return {
    traceId: trace,
    spanId: `${req.toString(16).padStart(8, '0')}${n.toString(16).padStart(8, '0')}`,
    parentSpanId: '',
    name: n % 2 ? `Node evaluated (model.p.m${n})` : 'Phase: RUN',
    kind: 1,
    startTimeUnixNano: String(1772073188904419000n + BigInt(n)),
    endTimeUnixNano: 1772073189904419000 + n,
    attributes: [
      { key: 'unique_id', value: { stringValue: `model.p.m${n}` } },
      { key: 'node_outcome', value: { stringValue: 'NODE_OUTCOME_SUCCESS' } },
      { key: 'n', value: { intValue: n } },
      { key: 'nested', value: { kvlistValue: { values: [{ key: 'k', value: { arrayValue: { values: [{ doubleValue: 0.5 }, { boolValue: true }] } } }] } } },
    ],
    status: { code: 1, message: '' },
  };
}

/** One field of a span (or of its attributes, status, links) set to an odd value. */
function poisonSpan(span: Json, rnd: () => number): Json {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const odd = pick(ODD);
  const s = structuredClone(span);
  const attrs = s.attributes as Json[];
  switch (pick(['field', 'field', 'attrKey', 'attrValue', 'anyValue', 'status', 'links'])) {
    case 'field':
      s[pick(['name', 'name', 'traceId', 'spanId', 'parentSpanId', 'startTimeUnixNano', 'endTimeUnixNano', 'attributes', 'kind'])] = odd;
      break;
    case 'attrKey':
      attrs[0]!.key = odd;
      break;
    case 'attrValue':
      attrs[1]!.value = odd;
      break;
    case 'anyValue':
      attrs[2]!.value = { [pick(['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'])]: odd };
      break;
    case 'status':
      s.status = rnd() < 0.3 ? odd : { [pick(['code', 'message'])]: odd };
      break;
    case 'links':
      s.links = rnd() < 0.3 ? odd : [{ traceId: odd, spanId: s.spanId, attributes: [{ key: odd, value: { stringValue: 'x' } }] }];
      break;
  }
  return s;
}

function poisonLog(trace: string, req: number, n: number, rnd: () => number): Json {
  const log: Json = {
    timeUnixNano: String(1772073189904419000n + BigInt(n)),
    traceId: trace,
    spanId: `${req.toString(16).padStart(8, '0')}${n.toString(16).padStart(8, '0')}`,
    severityNumber: 9,
    severityText: 'INFO',
    body: { stringValue: `poison client ${req}/${n}` },
    eventName: 'v1.public.events.fusion.log.LogMessage',
    attributes: [{ key: 'event_id', value: { stringValue: `p-${req}-${n}` } }],
  };
  if (rnd() < 0.5) {
    const field = ['timeUnixNano', 'traceId', 'spanId', 'severityNumber', 'severityText', 'body', 'eventName', 'attributes'][Math.floor(rnd() * 8)]!;
    log[field] = ODD[Math.floor(rnd() * ODD.length)];
  }
  return log;
}

interface Sent {
  status: number;
  /** span or log ids of the request's records a 200 acknowledged (all sent minus rejected); null for damaged protobuf */
  prefix: string | null;
  logs: boolean;
  sent: number;
  rejected: number;
}

async function poisonClient(url: string, seed: number, requests: number, trace: string): Promise<Sent[]> {
  const rnd = seededRandom(seed);
  const TraceReq = otlpRoot().lookupType('opentelemetry.proto.trace.v1.ExportTraceServiceRequest');
  const out: Sent[] = [];
  for (let r = 1; r <= requests; r++) {
    const prefix = r.toString(16).padStart(8, '0');
    const kind = rnd();
    let res: Response;
    let sent: number;
    let ackPrefix: string | null = prefix;
    let isLogs = false;
    if (kind < 0.15) {
      // logs, half of them poisoned
      const logs = Array.from({ length: 1 + Math.floor(rnd() * 8) }, (_, n) => poisonLog(trace, r, n, rnd));
      sent = logs.length;
      isLogs = true;
      res = await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: logs }] }] }) });
    } else if (kind < 0.3) {
      // valid protobuf with bytes flipped: 400, or 200 for what protobufjs decodes (minus what is rejected)
      const spans = Array.from({ length: 1 + Math.floor(rnd() * 6) }, (_, n) => {
        const s = validSpan(r, n, trace);
        return { ...s, traceId: Buffer.from(trace, 'hex'), spanId: Buffer.from(s.spanId as string, 'hex'), parentSpanId: undefined, endTimeUnixNano: String(s.endTimeUnixNano) };
      });
      const body = Buffer.from(TraceReq.encode(TraceReq.fromObject({ resourceSpans: [{ scopeSpans: [{ spans }] }] })).finish());
      for (let k = 0; k < 1 + Math.floor(rnd() * 3); k++) body[Math.floor(rnd() * body.length)] = Math.floor(rnd() * 256);
      res = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
      let decoded = 0;
      if (res.status === 200) {
        const req = TraceReq.decode(body) as unknown as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
        for (const rs of req.resourceSpans) for (const ss of rs.scopeSpans) decoded += ss.spans.length;
      }
      sent = decoded;
      ackPrefix = null;
    } else {
      const spans = Array.from({ length: 1 + Math.floor(rnd() * 12) }, (_, n) => {
        const s = validSpan(r, n, trace);
        return rnd() < 0.4 ? poisonSpan(s, rnd) : s;
      });
      sent = spans.length;
      const type = ['application/json', 'APPLICATION/JSON; charset=utf-8'][Math.floor(rnd() * 2)]!;
      res = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }) });
    }
    const body = Buffer.from(await res.arrayBuffer());
    let rejected = 0;
    if (res.status === 200 && body.length) {
      let partial: { rejectedSpans?: string; rejectedLogRecords?: string } | undefined;
      if (res.headers.get('content-type')?.startsWith('application/json')) partial = (JSON.parse(body.toString()) as { partialSuccess?: typeof partial }).partialSuccess;
      else {
        const T = otlpRoot().lookupType('opentelemetry.proto.trace.v1.ExportTraceServiceResponse');
        partial = (T.toObject(T.decode(body), { longs: String }) as { partialSuccess?: typeof partial }).partialSuccess;
      }
      rejected = Number(partial?.rejectedSpans ?? partial?.rejectedLogRecords ?? 0);
    }
    out.push({ status: res.status, prefix: ackPrefix, logs: isLogs, sent, rejected });
  }
  return out;
}

async function send(files: string[], url: string): Promise<void> {
  const sink = new OtlpSink({ endpoint: url, level: 'trace' });
  for (const f of files) for await (const r of readRecords(f)) sink.write(r);
  await sink.close();
}

const SPAN_KEYS = `SELECT trace_id, span_id, span_name, start_ns::VARCHAR AS s, end_ns::VARCHAR AS e, status_code FROM spans`;
const LOG_KEYS = `SELECT trace_id, span_id, time_ns::VARCHAR AS t, body, event_type FROM logs`;

const real = samplesNote(FUSION);

describe('runlens receive: a valid client and a poison client at once', () => {
  const title = 'every span and log the valid client sent is stored; everything acknowledged is stored, once';
  it(real.missing ? `${title} (the real sample left out: ${FUSION} not found)` : title, async () => {
    const dir = tempDir();
    const generated = path.join(dir, 'run.jsonl');
    await generate({ output: generated, runs: 1, nodes: 150, seed: 21, failRate: 0.1 });
    const files = [generated];
    const realSample = sample(FUSION, 'forwarder-otel-preview120.jsonl');
    if (!real.missing && existsSync(realSample)) files.push(realSample);
    else if (process.env.CI) throw new Error(`${realSample} is missing`);

    const db: Db = await openModel();
    // small, frequent batches so poison and valid records share them
    const rx = new OtlpReceiver({ db, port: 0, flushIntervalMs: 20, flushRecords: 300 });
    await rx.start();
    cleanups.push(async () => {
      await rx.close();
      db.close();
    });
    const POISON_TRACE = 'feedfacefeedfacefeedfacefeedface';
    const [, answers] = await Promise.all([send(files, rx.url), poisonClient(rx.url, 20, 160, POISON_TRACE)]);
    await rx.close();
    expect(rx.stats.lost).toBe(0);

    // The valid client: the model holds what loading its files holds (OTLP carries no SpanStart).
    const expected = await openModel();
    cleanups.push(() => expected.close());
    await loadPaths(expected, files);
    const valid = (await expected.all<{ trace_id: string }>(`SELECT DISTINCT trace_id FROM record_rows`)).map((r) => `'${r.trace_id}'`).join(', ');
    const theirs = `WHERE trace_id IN (${valid}) ORDER BY ALL`;
    const spans = await expected.all(`${SPAN_KEYS} ${theirs}`);
    expect(spans.length).toBeGreaterThan(300);
    expect(await db.all(`${SPAN_KEYS} ${theirs}`)).toEqual(spans);
    expect(await db.all(`${LOG_KEYS} ${theirs}`)).toEqual(await expected.all(`${LOG_KEYS} ${theirs}`));

    // The poison client: never a 5xx; each request's acknowledged records (sent minus rejected) are stored.
    expect(answers.filter((a) => a.status !== 200 && a.status !== 400)).toEqual([]);
    expect(answers.filter((a) => a.status === 200 && a.rejected > 0).length).toBeGreaterThan(20);
    expect(answers.filter((a) => a.status === 400).length).toBeGreaterThan(0);
    const stored = await db.all<{ prefix: string; n: number }>(
      `SELECT left(span_id, 8) AS prefix, count(*)::INT AS n FROM record_rows WHERE trace_id = '${POISON_TRACE}' AND span_id IS NOT NULL GROUP BY 1`,
    );
    const byPrefix = new Map(stored.map((r) => [r.prefix, r.n]));
    let acknowledged = 0;
    for (const a of answers) {
      const ack = a.status === 200 ? a.sent - a.rejected : 0;
      acknowledged += ack;
      if (a.prefix === null) continue;
      const what = `request ${a.prefix}: ${a.sent} sent, ${a.rejected} rejected, answered ${a.status}`;
      // a log whose span id was poisoned to "" or null is kept without one: counted in the total below
      if (a.logs) expect(byPrefix.get(a.prefix) ?? 0, what).toBeLessThanOrEqual(ack);
      else expect(byPrefix.get(a.prefix) ?? 0, what).toBe(ack);
    }
    expect(acknowledged).toBeGreaterThan(200);
    expect(await db.scalar<number>(`SELECT count(*)::INT FROM record_rows WHERE trace_id NOT IN (${valid})`)).toBe(acknowledged);
    // once: no record is there twice that was not twice in the valid client's files
    const twice = `SELECT trace_id, span_id, record_type, time_ns::VARCHAR AS t, body, count(*)::INT AS n FROM record_rows WHERE record_type <> 'SpanStart' GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL`;
    expect(await db.all(twice)).toEqual(await expected.all(twice));
  });
});
