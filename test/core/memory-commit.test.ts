/**
 * Models open in a process must not reserve memory they do not use: the kernel counts reserved
 * memory against a fork, so a process holding a few models could no longer start a child
 * (`record`'s command, a job step, a test's CLI run) and got ENOMEM.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { openModel } from '../../src/store/load.js';

describe('open models and child processes', () => {
  it('a process with four models open still starts a child process', async () => {
    const dbs = await Promise.all([1, 2, 3, 4].map(() => openModel()));
    try {
      const r = spawnSync(process.execPath, ['-e', '0']);
      expect(r.error?.message).toBeUndefined();
      expect(r.status).toBe(0);
    } finally {
      for (const db of dbs) db.close();
    }
  });
});
