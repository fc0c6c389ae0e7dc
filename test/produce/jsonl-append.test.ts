import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { serializeRecord, type LogRecordRecord } from '../../src/produce/record.js';
import { JsonlSink } from '../../src/produce/sinks/jsonl.js';

const dir = mkdtempSync(join(tmpdir(), 'runlens-append-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('JsonlSink.appendFile (a helper thread part, copied while it is written)', () => {
  it('copies every byte of a file that appears late and grows in pieces, after what was written', async () => {
    const out = join(dir, 'out.jsonl');
    const part = join(dir, 'part.jsonl');
    const sink = new JsonlSink({ path: out, append: false });
    const r: LogRecordRecord = {
      record_type: 'LogRecord', trace_id: 'ab'.repeat(16), span_id: null, span_name: null, event_id: '019cadc6-9a80-7832-befb-1d448955bbe6',
      time_unix_nano: '1772073188904419000', severity_number: 9, severity_text: 'INFO', body: 'before the part', event_type: 'v1.public.events.fusion.log.LogMessage', attributes: {},
    };
    sink.write(r);
    const first = serializeRecord(r) + '\n';
    const pieces = Array.from({ length: 6 }, (_, i) => `{"piece":${i},"pad":"${'x'.repeat(100_000 * (i + 1))}"}\n`);
    const writer = (async () => {
      await sleep(40); // the file does not exist yet when the copy starts
      writeFileSync(part, '');
      for (const p of pieces) {
        appendFileSync(part, p.slice(0, 1000));
        await sleep(15);
        appendFileSync(part, p.slice(1000)); // lines split across writes
      }
    })();
    await sink.appendFile(part, writer);
    await sink.close();
    expect(readFileSync(out, 'utf8')).toBe(first + pieces.join(''));
  });

  it('gives up with the file missing once the writer has failed', async () => {
    const sink = new JsonlSink({ path: join(dir, 'out2.jsonl'), append: false });
    const failed = sleep(30).then(() => Promise.reject(new Error('helper failed')));
    failed.catch(() => undefined);
    await expect(sink.appendFile(join(dir, 'never.jsonl'), failed)).rejects.toThrow(/ENOENT/);
    await sink.close();
  });
});

describe('JsonlSink byte chunks (reused once the stream has written them)', () => {
  it('a slow stream gets every line intact, non-ASCII and oversized lines included', async () => {
    // The consumer holds each chunk for a while and copies it only then: a chunk reused too early
    // would show up as later lines in place of earlier ones.
    const got: Buffer[] = [];
    const slow = new Writable({
      highWaterMark: 1 << 14,
      write(chunk: Buffer, _enc, done) {
        setTimeout(() => {
          got.push(Buffer.from(chunk));
          done();
        }, 1);
      },
    });
    const sink = new JsonlSink({ stream: slow, level: 'trace' });
    let expected = '';
    for (let i = 0; i < 3000; i++) {
      const body = i % 500 === 7 ? 'y'.repeat(300_000) : `line ${i} ${'é€'.repeat(i % 40)} ${'z'.repeat(i % 300)}`;
      const r: LogRecordRecord = {
        record_type: 'LogRecord', trace_id: 'cd'.repeat(16), span_id: null, span_name: null, event_id: `e-${i}`,
        time_unix_nano: String(1772073188904419000n + BigInt(i)), severity_number: 9, severity_text: 'INFO', body,
        event_type: 'v1.public.events.fusion.log.LogMessage', attributes: {},
      };
      sink.write(r);
      expected += serializeRecord(r) + '\n';
      if (i % 100 === 0) await sink.drain();
    }
    await sink.close();
    await new Promise<void>((res) => slow.end(res));
    expect(Buffer.concat(got).toString('utf8')).toBe(expected);
  });
});
