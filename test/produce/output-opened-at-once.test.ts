/**
 * A writer's file exists as soon as the writer is made. A stop signal's cleanup (which removes the
 * files written beside outputs) runs between two steps of the event loop: an open still pending on
 * the thread pool then would make the file after the cleanup, and the stopped process would leave it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonlSink } from '../../src/produce/sinks/jsonl.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);

describe('an output file is opened before its writer is handed back', () => {
  it('JsonlSink: the file is there when the constructor returns, for .jsonl and .jsonl.gz', async () => {
    for (const name of ['a.jsonl', 'a.jsonl.gz']) {
      const file = path.join(tmp.dir, name);
      const sink = new JsonlSink({ path: file, append: false });
      const there = existsSync(file);
      await sink.close();
      expect(there, name).toBe(true);
    }
  });

  it('JsonlSink on a path that cannot be opened still reports the error, when it is closed', async () => {
    const folder = path.join(tmp.dir, 'is-a-folder.jsonl');
    mkdirSync(folder);
    const sink = new JsonlSink({ path: folder, append: false });
    await expect(sink.close()).rejects.toThrow(/EISDIR/);
  });
});
