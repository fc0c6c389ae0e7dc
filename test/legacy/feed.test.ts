/** How a JSON log stream is cut into lines and passed on: the human side of each chunk first, then its events. */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LineSplitter, feedLines } from '../../src/legacy/log-file.js';
import type { LegacyEvent } from '../../src/legacy/log-events.js';
import type { LogTranslator } from '../../src/legacy/log-translator.js';
import { NOT_UTF8 } from '../../src/ingest/text-encoding.js';

/** Lines as awk counts them: LF ends one, a CR before it is part of the line end. */
function lfLines(chunks: string[]): string[] {
  const text = chunks.join('');
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  return text.endsWith('\n') || text === '' ? lines.slice(0, -1) : lines;
}

function splitterLines(chunks: (string | Buffer)[], notUtf8: string[] = []): string[] {
  const out: string[] = [];
  const s = new LineSplitter();
  const onLine = (l: string, utf8: boolean) => {
    out.push(l);
    if (!utf8) notUtf8.push(l);
  };
  for (const c of chunks) s.push(Buffer.from(c), onLine);
  s.end(onLine);
  return out;
}

const line = (name: string, level: string, msg: string) => JSON.stringify({ data: {}, info: { name, code: 'X', level, msg, invocation_id: 'i', ts: '2026-01-05T10:00:00.000000Z' } });

describe('log stream input', () => {
  it('only \\n ends a line (\\r\\n too, a lone \\r does not), however the chunks fall', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const parts = ['a', '{"x":1}', '\r', '\n', '\r\n', ''];
    for (let k = 0; k < 400; k++) {
      let text = '';
      for (let i = rnd(10); i > 0; i--) text += parts[rnd(parts.length)];
      const chunks: string[] = [];
      for (let i = 0; i < text.length; ) {
        const j = i + 1 + rnd(5);
        chunks.push(text.slice(i, j));
        i = j;
      }
      expect(splitterLines(chunks), JSON.stringify(chunks)).toEqual(lfLines(chunks));
    }
  });

  it('a line of 32 MB in 64 KB chunks comes out whole, with the lines around it', () => {
    const chunk = 'x'.repeat(64 * 1024);
    const chunks = ['first\nsecond ', ...Array.from({ length: 512 }, () => chunk), '\r', 'third\r\nlast'];
    const lines = splitterLines(chunks);
    expect(lines.length).toBe(3);
    expect([lines[0], lines[2]]).toEqual(['first', 'last']);
    expect(lines[1]!.length).toBe('second '.length + 512 * chunk.length + '\rthird'.length);
  });

  it('a character cut between chunks is read whole; a line with a byte that is not UTF-8 is said, the lines around it are not', () => {
    const bytes = Buffer.from('{"a":"\u00fc\u20ac"}\n{"b":"x\u00e9"}\r\n{"c":1}\nlast \u00fc', 'utf8');
    const lines = ['{"a":"\u00fc\u20ac"}', '{"b":"x\u00e9"}', '{"c":1}', 'last \u00fc'];
    for (let cut = 1; cut < bytes.length; cut++) {
      const bad: string[] = [];
      expect(splitterLines([bytes.subarray(0, cut), bytes.subarray(cut)], bad), String(cut)).toEqual(lines);
      expect(bad).toEqual([]);
    }
    const broken = Buffer.concat([bytes.subarray(0, 22), Buffer.from([0xff]), bytes.subarray(22)]);
    for (let cut = 1; cut < broken.length; cut++) {
      const bad: string[] = [];
      const out = splitterLines([broken.subarray(0, cut), broken.subarray(cut)], bad);
      expect(out.length).toBe(4);
      expect(bad, String(cut)).toEqual([out[1]]);
      expect([out[0], out[2], out[3]]).toEqual([lines[0], lines[2], lines[3]]);
    }
  });

  it("a live command's event line that is not UTF-8 is still read (U+FFFD in place of its bad bytes), not dropped", async () => {
    const fed: string[] = [];
    const t = { feed: (ev: LegacyEvent) => fed.push(ev.msg) } as unknown as LogTranslator;
    const bytes = Buffer.from(`${line('LogModelResult', 'error', 'ERROR creating stg_cust\u00ffomers')}\n`, 'latin1');
    const r = await feedLines(Readable.from([bytes]), t);
    expect(fed).toEqual(['ERROR creating stg_cust\ufffdomers']);
    expect(r).toEqual({ lines: 1, badLines: 0, malformed: [], unread: { count: 0, first: [] }, notUtf8: { count: 1, first: [{ line: 1, reason: NOT_UTF8 }] } });
  });

  it("a chunk's human text (non-JSON lines as they are, messages of non-debug events) is passed on before its events are translated", async () => {
    const order: string[] = [];
    const t = { feed: (ev: LegacyEvent) => order.push(`feed ${ev.name}`) } as unknown as LogTranslator;
    const chunk1 = [line('MainReportVersion', 'info', 'Running with dbt=1.9.0'), 'plain text', line('NodeStart', 'debug', 'NodeStart'), ''].join('\n');
    const chunk2 = [line('LogStartLine', 'info', '1 of 1 START'), '{not json'].join('\n');
    const r = await feedLines(Readable.from([Buffer.from(chunk1), Buffer.from(chunk2)]), t, { human: (text) => order.push(`human ${JSON.stringify(text)}`) });
    expect(order).toEqual([
      `human ${JSON.stringify('Running with dbt=1.9.0\nplain text\n')}`,
      'feed MainReportVersion',
      'feed NodeStart',
      `human ${JSON.stringify('1 of 1 START\n')}`,
      'feed LogStartLine',
      `human ${JSON.stringify('{not json\n')}`, // the last line, unended, once the stream ends
    ]);
    // the unended `{not json` began as JSON: passed over, and said
    expect(r).toEqual({ lines: 5, badLines: 2, malformed: [], unread: { count: 1, first: [{ line: 5, reason: expect.stringMatching(/^malformed JSON: /) }] }, notUtf8: { count: 0, first: [] } });
  });
});
