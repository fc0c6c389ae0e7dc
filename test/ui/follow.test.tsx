import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Follower } from '../../src/analyze/explore/follow.js';
import { closeReader, readerFor } from '../../src/analyze/explore/reader.js';
import { openModel } from '../../src/store/load.js';
import { App } from '../../src/ui/App.js';
import { closeLater, haveSample, KEY, mount, OLDER_SAMPLE, SAMPLE } from './helpers.js';

describe.skipIf(!haveSample)('--follow: a JSONL file still being written', () => {
  let dir: string;
  let lines: string[];
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'runlens-follow-test-'));
    lines = readFileSync(SAMPLE, 'utf8').split('\n').filter(Boolean);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads whole lines only, then appended lines; unended spans end', async () => {
    const file = path.join(dir, 'a.jsonl');
    const half = lines[300]!;
    writeFileSync(file, lines.slice(0, 300).join('\n') + '\n' + half.slice(0, 40));
    const db = await openModel();
    const f = new Follower(db, file, { intervalMs: 60_000 });
    expect(await f.start()).toBe(300);
    expect(await db.scalar('SELECT ended FROM runs')).toBe(false);
    appendFileSync(file, half.slice(40) + '\n' + lines.slice(301).join('\n') + '\n');
    expect(await f.poll()).toBe(lines.length - 300);
    expect(await f.poll()).toBe(0);
    expect(await db.scalar('SELECT count(*)::INTEGER FROM record_rows WHERE record_type IS NOT NULL')).toBe(lines.length);
    expect(await db.one('SELECT ended, failed, nodes::INTEGER AS nodes FROM runs')).toEqual({ ended: true, failed: true, nodes: 48 });
    await f.stop();
    db.close();
  });

  it('reads a file that was replaced or truncated from its start again', async () => {
    const file = path.join(dir, 'c.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const db = await openModel();
    let replaced = 0;
    const f = new Follower(db, file, { intervalMs: 60_000, onReplaced: () => replaced++ });
    expect(await f.start()).toBe(lines.length);
    // A new file in its place (the logs folder cleaned between two commands), shorter at first.
    const other = readFileSync(OLDER_SAMPLE, 'utf8').split('\n').filter(Boolean);
    rmSync(file);
    writeFileSync(file, other.slice(0, 100).join('\n') + '\n');
    expect(await f.poll()).toBe(100);
    appendFileSync(file, other.slice(100).join('\n') + '\n');
    expect(await f.poll()).toBe(other.length - 100);
    // The same file emptied and written again in place, longer by the next poll than before.
    writeFileSync(file, lines.join('\n') + '\n' + other.join('\n') + '\n');
    expect(await f.poll()).toBe(0); // every record is present already
    expect(replaced).toBe(2);
    expect(await db.scalar('SELECT count(*)::INTEGER FROM record_rows WHERE record_type IS NOT NULL')).toBe(lines.length + other.length);
    expect(await db.scalar('SELECT count(*)::INTEGER FROM runs WHERE ended')).toBe(3);
    await f.stop();
    db.close();
  });

  it('updates the screens live: running spans show as running, then end', async () => {
    const file = path.join(dir, 'b.jsonl');
    // cut before the run's first failure: it is running, not FAILED
    writeFileSync(file, lines.slice(0, 300).join('\n') + '\n');
    const db = await openModel();
    const reader = await readerFor(db);
    let follower: Follower | undefined;
    const t = mount(
      <App
        db={reader}
        width={140}
        height={30}
        theme={{ color: false }}
        live
        loader={async (h) => {
          follower = new Follower(db, file, { intervalMs: 50, onLoaded: (n) => h.loaded(`+${n} records`) });
          h.loaded(`following (${await follower.start()} records)`);
        }}
      />,
    );
    await t.until(/running +build/, 'a running run');
    await t.press(KEY.enter);
    await t.until(/\d+ running/, 'running spans in the tree');
    await t.until(/dbt invocation .*running +running/, 'the invocation running');
    appendFileSync(file, lines.slice(300).join('\n') + '\n');
    await t.until((fr) => /323 spans/.test(fr) && !/\d+ running/.test(fr), 'the run ended');
    await t.press(KEY.esc);
    await t.until(/FAILED +build/, 'the runs screen updated');
    t.unmount();
    await follower?.stop();
    await closeReader(reader);
    await closeLater(db);
  });
});
