import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { receiveLive } from '../../src/analyze/explore/receive.js';
import { closeReader, readerFor } from '../../src/analyze/explore/reader.js';
import type { OtlpReceiver } from '../../src/ingest/otlp-receiver.js';
import { readRecords } from '../../src/produce/convert.js';
import { generate } from '../../src/produce/generate/index.js';
import { OtlpSink } from '../../src/produce/sinks/otlp.js';
import { openModel } from '../../src/store/load.js';
import { App } from '../../src/ui/App.js';
import { tempDir } from '../helpers/fixtures.js';
import { closeLater, KEY, mount } from './helpers.js';

describe('explore --receive: runs arriving over OTLP', () => {
  it('shows the receiver address, then the run as its spans arrive, and its tree', async () => {
    const jsonl = path.join(tempDir(), 'run.jsonl');
    await generate({ output: jsonl, runs: 1, nodes: 40, seed: 3, failRate: 0.3 });
    const db = await openModel();
    const reader = await readerFor(db);
    let rx: OtlpReceiver | undefined;
    const t = mount(
      <App db={reader} width={140} height={30} theme={{ color: false }} label="receive" live loader={async (h) => {
        rx = await receiveLive(db, { host: '127.0.0.1', port: 0 }, h);
      }} />,
    );
    try {
      const first = await t.until((f) => /receiving OTLP on http:\/\/127\.0\.0\.1:\d+/.test(f) && f.includes('received 0 spans, 0 logs'), 'the receiver address');
      expect(first).toMatch(/no runs yet: point the engine at http:\/\/127\.0\.0\.1:\d+/);
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(first)![1]!;
      expect(url).toBe(rx!.url);
      const sink = new OtlpSink({ endpoint: url, level: 'trace' });
      for await (const r of readRecords(jsonl)) sink.write(r);
      await sink.close();
      const spans = rx!.stats.spans;
      expect(spans).toBeGreaterThan(100);
      await t.until((f) => /FAILED +build/.test(f) && f.includes(`${spans} spans`), 'the received run, derived');
      await t.press(KEY.enter);
      await t.until((f) => new RegExp(`run [0-9a-f]{12} +${spans} spans`).test(f) && /▾ Phase: RENDER/.test(f), 'its span tree');
    } finally {
      t.unmount();
      await rx?.close();
      await closeReader(reader);
      await closeLater(db);
    }
  });
});
