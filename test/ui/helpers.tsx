/** Shared set-up for explorer component tests: the real sample loaded once, ink-testing-library. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { render } from 'ink-testing-library';
import type { ReactElement } from 'react';
import { loadPaths, openModel } from '../../src/store/load.js';
import type { Db } from '../../src/store/db.js';
import { App } from '../../src/ui/App.js';
import { skipOrFailInCi } from '../helpers/samples.js';

export const SAMPLE = path.resolve(__dirname, '../../../shared/samples/fusion-jsonl/forwarder-otel-preview120.jsonl');
export const OLDER_SAMPLE = path.resolve(__dirname, '../../../shared/samples/fusion-jsonl/forwarder-otel-preview72.jsonl');
export const FAILED_SAMPLE = path.resolve(__dirname, '../../../shared/samples/fusion-jsonl/forwarder-otel_failed-preview120.jsonl');
export const haveSample = existsSync(SAMPLE);
if (!haveSample) skipOrFailInCi(`explorer tests: the sample ${SAMPLE} is missing`);

export async function sampleDb(paths: string[] = [SAMPLE]): Promise<Db> {
  const db = await openModel();
  await loadPaths(db, paths);
  return db;
}

/** Poll the last frame until `test` passes (no fixed sleeps); fails with the frame at the deadline. */
export async function waitFor(frame: () => string | undefined, test: (f: string) => boolean, what: string, ms = 10_000): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const f = frame() ?? '';
    if (test(f)) return f;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last frame:\n${f}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface Mounted {
  frame(): string;
  until(test: string | RegExp | ((f: string) => boolean), what?: string): Promise<string>;
  press(...keys: string[]): Promise<void>;
  unmount(): void;
}

export function mount(el: ReactElement): Mounted {
  const r = render(el);
  const frame = () => r.lastFrame() ?? '';
  const until = (test: string | RegExp | ((f: string) => boolean), what?: string) =>
    waitFor(frame, typeof test === 'function' ? test : (f) => (typeof test === 'string' ? f.includes(test) : test.test(f)), what ?? String(test));
  /** ink reads input asynchronously: give each key its own tick */
  const press = async (...keys: string[]) => {
    for (const k of keys) {
      r.stdin.write(k);
      await new Promise((res) => setTimeout(res, 15));
    }
  };
  return { frame, until, press, unmount: () => r.unmount() };
}

export const KEY = { enter: '\r', esc: '\x1b', down: '\x1b[B', up: '\x1b[A', right: '\x1b[C', left: '\x1b[D', backspace: '\x7f', tab: '\t' };

export function app(db: Db, width = 140, height = 30): Mounted {
  return mount(<App db={db} width={width} height={height} theme={{ color: false }} />);
}

/** Close after unmounted screens' last queries settle (closing under a running query can crash). */
export async function closeLater(db: Db | undefined): Promise<void> {
  await new Promise((r) => setTimeout(r, 300));
  db?.close();
}
