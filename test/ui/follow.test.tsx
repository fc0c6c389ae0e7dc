import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Follower, followNote, type FollowBatch } from '../../src/analyze/explore/follow.js';
import { DEFAULT_START, generate } from '../../src/produce/generate/index.js';
import { closeReader, readerFor } from '../../src/analyze/explore/reader.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { App } from '../../src/ui/App.js';
import { runCli } from '../helpers/cli.js';
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

  it('skips a malformed complete line, naming the followed file and its line, and goes on following', async () => {
    const file = path.join(dir, 'broken.jsonl');
    writeFileSync(file, lines.slice(0, 300).join('\n') + '\n');
    const db = await openModel();
    const batches: FollowBatch[] = [];
    const errors: unknown[] = [];
    const f = new Follower(db, file, { intervalMs: 20, onLoaded: (b) => batches.push(b), onError: (e) => errors.push(e) });
    expect(await f.start()).toBe(300);
    // an engine killed mid-line, then the next run appending to the same file
    appendFileSync(file, '{"record_type":"LogRecord", broken\n');
    // a batch that adds no record still ends the load in the status line
    for (let i = 0; i < 500 && batches.length === 0 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(errors).toEqual([]);
    expect(batches[0]).toMatchObject({ records: 0, skippedLines: 1, firstSkipped: { line: 301 } });
    const note = followNote(file, batches[0]!);
    expect(note).toContain(`${file}:301: malformed JSON`);
    expect(note).not.toMatch(/\.part\d+\.jsonl/);
    appendFileSync(file, lines.slice(300).join('\n') + '\n');
    for (let i = 0; i < 500 && batches.length < 2 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await f.stop();
    expect(errors).toEqual([]);
    expect(batches[1]).toMatchObject({ records: lines.length - 300, skippedLines: 0 });
    expect(f.skippedLines).toBe(1);
    expect(await db.scalar('SELECT count(*)::INTEGER FROM record_rows WHERE record_type IS NOT NULL')).toBe(lines.length);
    expect(await db.one('SELECT ended, nodes::INTEGER AS nodes FROM runs')).toEqual({ ended: true, nodes: 48 });
    db.close();
  });

  it('reads a file that was replaced or truncated from its start again', async () => {
    const file = path.join(dir, 'c.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const db = await openModel();
    const f = new Follower(db, file, { intervalMs: 60_000 });
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
    expect(f.restarts).toBe(2);
    expect(await db.scalar('SELECT count(*)::INTEGER FROM record_rows WHERE record_type IS NOT NULL')).toBe(lines.length + other.length);
    expect(await db.scalar('SELECT count(*)::INTEGER FROM runs WHERE ended')).toBe(3);
    await f.stop();
    db.close();
  });

  it('says in the status line that the file was replaced, also when its copy adds no record', async () => {
    const file = path.join(dir, 'd.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const db = await openModel();
    const batches: FollowBatch[] = [];
    const f = new Follower(db, file, { intervalMs: 20, onLoaded: (b) => batches.push(b) });
    await f.start();
    // the same content written anew (cp then mv): a new file, every record present already
    writeFileSync(`${file}.tmp`, lines.join('\n') + '\n');
    renameSync(`${file}.tmp`, file);
    for (let i = 0; i < 500 && !batches.some((b) => b.restarted); i++) await new Promise((r) => setTimeout(r, 20));
    await f.stop();
    const b = batches.find((x) => x.restarted)!;
    expect(b).toMatchObject({ records: 0, restarted: true });
    expect(followNote(file, b)).toBe(`following: ${file} was replaced or truncated: read again from its start, +0 records new`);
    db.close();
  });

  it('updates the screens live: running spans show as running, then end', async () => {
    const file = path.join(dir, 'b.jsonl');
    // cut before the run's first failure: it is running, not FAILED
    writeFileSync(file, lines.slice(0, 300).join('\n') + '\n');
    const { t, close } = await following(file, { width: 140, height: 30 });
    await t.until(/running +build/, 'a running run');
    await t.press(KEY.enter);
    await t.until(/\d+ running/, 'running spans in the tree');
    await t.until(/dbt invocation .*running +running/, 'the invocation running');
    appendFileSync(file, lines.slice(300).join('\n') + '\n');
    await t.until((fr) => /323 spans/.test(fr) && !/\d+ running/.test(fr), 'the run ended');
    await t.press(KEY.esc);
    await t.until(/FAILED +build/, 'the runs screen updated');
    await close();
  });
});

/** The explorer following `file` (polled often), with a model of the whole sample to compare with. */
async function following(file: string, size = { width: 160, height: 40 }) {
  const db = await openModel();
  const reader = await readerFor(db);
  let follower: Follower | undefined;
  const t = mount(
    <App
      db={reader}
      width={size.width}
      height={size.height}
      theme={{ color: false }}
      live
      loader={async (h) => {
        follower = new Follower(db, file, { intervalMs: 50, onLoaded: (b) => h.loaded(`+${b.records} records`) });
        h.loaded(`following (${await follower.start()} records)`);
      }}
    />,
  );
  return {
    t,
    async close() {
      t.unmount();
      await follower?.stop();
      await closeReader(reader);
      await closeLater(db);
    },
  };
}

describe('--follow: the open tree takes in what arrives', () => {
  const FAILED_BUILD = path.resolve(__dirname, '../../samples/failed-build.jsonl');
  let dir: string;
  let lines: string[];
  /** the whole run, loaded at once */
  let whole: Awaited<ReturnType<typeof openModel>>;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'runlens-follow-tree-'));
    lines = readFileSync(FAILED_BUILD, 'utf8').split('\n').filter(Boolean);
    whole = await openModel();
    await loadPaths(whole, [FAILED_BUILD]);
  });
  afterAll(async () => {
    whole.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Follow the first `n` lines, open the run, then `before`, append the rest and wait for every span. */
  async function openThenAppend(name: string, n: number, before: (t: ReturnType<typeof mount>) => Promise<void>) {
    const file = path.join(dir, name);
    writeFileSync(file, lines.slice(0, n).join('\n') + '\n');
    const f = await following(file);
    await f.t.until(/(running|FAILED) +build/, 'the run');
    await f.t.press(KEY.enter);
    await f.t.until('dbt invocation', 'its tree');
    await before(f.t);
    appendFileSync(file, lines.slice(n).join('\n') + '\n');
    const spans = await whole.scalar<number>('SELECT count(*)::INTEGER FROM spans');
    await f.t.until(new RegExp(`run \\w+ +${spans} spans`), 'every span');
    return f;
  }

  it('offers the phases and resource types that arrived later in the p and t filters', async () => {
    const phases = (await whole.all<{ phase: string }>(
      `SELECT phase FROM spans WHERE phase IS NOT NULL GROUP BY phase ORDER BY coalesce(min(start_ns) FILTER (WHERE kind = 'phase'), min(start_ns)), phase`,
    )).map((r) => r.phase);
    const types = (await whole.all<{ t: string }>('SELECT DISTINCT resource_type AS t FROM spans WHERE resource_type IS NOT NULL ORDER BY t')).map((r) => r.t);
    // pressed once before the rest arrives: the filter values of the first lines are read
    const f = await openThenAppend('facets.jsonl', 100, async (t) => {
      await t.press('p');
      await t.until(/filter: phase=\w+/, 'a phase filter');
      await t.press('x');
      await t.until((fr) => !fr.includes('filter:'), 'no filter');
    });
    try {
      // each press shows the next value of the filter, then none
      const cycled = async (key: string, what: string) => {
        const valueIn = (fr: string) => new RegExp(`filter: .*${what}=(\\w+)`).exec(fr)?.[1];
        const seen: string[] = [];
        for (let i = 0; i < 20; i++) {
          await f.t.press(key);
          const v = valueIn(await f.t.until((fr) => valueIn(fr) !== seen.at(-1), `the next ${what}`));
          if (!v) break;
          seen.push(v);
        }
        return seen;
      };
      expect(await cycled('p', 'phase')).toEqual(phases);
      expect((await cycled('t', 'type')).sort()).toEqual(types);
    } finally {
      await f.close();
    }
  });

  it('counts and marks the search matches that arrived later', async () => {
    const matches = await whole.scalar<number>(
      `SELECT count(*)::INTEGER FROM spans WHERE contains(lower(coalesce(unique_id, '')), 'int_reviews') OR contains(lower(span_name), 'int_reviews')`,
    );
    const f = await openThenAppend('search.jsonl', 230, async (t) => {
      await t.press('/', ...'int_reviews', KEY.enter);
      await t.until(/"int_reviews": \d+ matches/, 'the first matches');
    });
    try {
      await f.t.until(`"int_reviews": ${matches} matches (n/N)`, 'every match counted');
      // n walks over the matches only: each selected row is one
      for (let i = 0; i < matches; i++) {
        const selected = (fr: string) => fr.split('\n').find((l) => l.startsWith('›')) ?? '';
        const before = selected(f.t.frame());
        await f.t.press('n');
        // a row not fetched yet shows as a placeholder (no name) for a frame
        const row = selected(await f.t.until((fr) => selected(fr) !== before && /\w/.test(selected(fr)), 'the next match'));
        expect(row).toMatch(/int_reviews/);
      }
      const marked = f.t.frame().split('\n').filter((l) => l.startsWith('*'));
      for (const l of marked) expect(l).toMatch(/int_reviews/);
    } finally {
      await f.close();
    }
  });

  it('keeps the selected run selected when a newer run arrives above it', async () => {
    const file = path.join(dir, 'two.jsonl');
    writeFileSync(file, readFileSync(path.resolve(__dirname, '../../samples/clean-build.jsonl'), 'utf8'));
    const f = await following(file);
    try {
      const traceLine = (fr: string) => /^trace [0-9a-f]{32}/m.exec(fr)?.[0];
      const before = traceLine(await f.t.until(/runs \(1\)/, 'the first run'));
      expect(before).toBeDefined();
      // failed-build as if run an hour after clean-build (both samples start at the same instant)
      const newer = path.join(dir, 'newer.jsonl');
      await generate({ output: newer, nodes: 48, seed: 7, failRate: 0.06, start: DEFAULT_START + 3_600_000_000_000n });
      appendFileSync(file, readFileSync(newer, 'utf8'));
      const after = await f.t.until(/runs \(2\)/, 'the newer run');
      // the newer run is listed first; the selection stayed with its run
      expect(after.split('\n').findIndex((l) => /FAILED +build/.test(l))).toBeLessThan(after.split('\n').findIndex((l) => /ok +build/.test(l)));
      expect(traceLine(after)).toBe(before);
    } finally {
      await f.close();
    }
  });
});

describe('--follow: what cannot be followed is an input error naming it, before the terminal is looked at', () => {
  it('a folder, a .gz or a Parquet file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'runlens-follow-input-'));
    try {
      for (const [arg, why] of [[dir, 'a folder'], ['samples/clean-build.parquet', 'not .gz or Parquet'], ['run.jsonl.gz', 'not .gz or Parquet']] as const) {
        const r = runCli(['explore', '--follow', arg]);
        expect(r.code, arg).toBe(2);
        expect(r.stderr, arg).toBe(`runlens: ${arg}: --follow needs a plain JSONL file (${why})\n`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
