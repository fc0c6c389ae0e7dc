import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
