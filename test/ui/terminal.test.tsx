import { EventEmitter } from 'node:events';
import { render } from 'ink';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { App } from '../../src/ui/App.js';
import { themeFromEnv, toneOf, toneProps } from '../../src/ui/theme.js';
import { closeLater, haveSample, sampleDb, waitFor } from './helpers.js';

describe('colours', () => {
  it('follow the outcome and turn off with NO_COLOR', () => {
    const on = themeFromEnv({});
    const off = themeFromEnv({ NO_COLOR: '1' });
    expect(toneProps(on, toneOf({ node_outcome: 'error' }))).toEqual({ color: 'red' });
    expect(toneProps(on, toneOf({ node_outcome: 'success', test_outcome: 'failed' }))).toEqual({ color: 'red' });
    expect(toneProps(on, toneOf({ test_outcome: 'warned' }))).toEqual({ color: 'yellow' });
    expect(toneProps(on, toneOf({ node_outcome: 'skipped' }))).toEqual({ dimColor: true });
    expect(toneProps(on, toneOf({ ended: false }))).toEqual({ color: 'cyan' });
    expect(toneProps(off, toneOf({ node_outcome: 'error' }))).toEqual({});
  });
});

/** A terminal whose size can change, like a real one. */
class Term extends EventEmitter {
  isTTY = true;
  columns = 120;
  rows = 20;
  last = '';
  write(s: string): boolean {
    this.last = s;
    return true;
  }
}

class Keys extends EventEmitter {
  isTTY = true;
  read(): null {
    return null;
  }
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
}

describe.skipIf(!haveSample)('terminal size', () => {
  let db: Db;
  beforeAll(async () => {
    db = await sampleDb();
  });
  afterAll(() => closeLater(db));

  it('fills the terminal and redraws on resize', async () => {
    const out = new Term();
    const app = render(<App db={db} theme={{ color: false }} />, {
      stdout: out as unknown as NodeJS.WriteStream,
      stdin: new Keys() as unknown as NodeJS.ReadStream,
      debug: true,
      patchConsole: false,
      exitOnCtrlC: false,
    });
    const frame = () => out.last;
    let f = await waitFor(frame, (x) => x.includes('FAILED'), 'runs');
    const width = (s: string) => Math.max(...s.split('\n').map((l) => l.length));
    expect(width(f)).toBe(120);
    expect(f.split('\n').length).toBe(19); // one line less than the terminal
    out.columns = 90;
    out.rows = 12;
    out.emit('resize');
    f = await waitFor(frame, (x) => width(x) === 90, 'a narrower frame');
    expect(f.split('\n').length).toBe(11);
    app.unmount();
  });
});
