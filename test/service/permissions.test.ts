/**
 * Who may write is one list (WRITE_ACCESS): the API's 403s, `runlens tokens --help` and docs/service.md
 * must all show the same permission sets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PERMISSION_SETS, WRITE_ACCESS, writeAccessSummary } from '../../src/service/http/auth.js';
import { SqliteStore } from '../../src/service/store/sqlite.js';
import { ROOT } from '../helpers/samples.js';
import { CLI } from './processes.js';
import { makeToken, startService, type Harness } from './helpers.js';

const oneLine = (s: string) => s.replace(/\s+/g, ' ');

describe('permission sets that may write', () => {
  let dir: string;
  let store: SqliteStore;
  let h: Harness;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'runlens-perm-'));
    store = new SqliteStore(join(dir, 'db'));
    h = await startService(store, { workDir: join(dir, 'runs') });
  });
  afterAll(async () => {
    await h.svc.close(false);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the API lets exactly the listed sets write, and its 403 names them', async () => {
    const sub = { name: 'p', client_url: 'https://example.com/hook', event_types: ['job.run.completed'], active: true };
    const job = { name: 'p', project_id: 1, environment_id: 1, execute_steps: ['node -v'] };
    const jobId = (await h.api('POST', '/api/v2/accounts/{acct}/jobs/', job)).json.data.id;
    const attempts = {
      webhooks: (t: string) => h.api('POST', '/api/v3/accounts/{acct}/webhooks/subscriptions', sub, t),
      jobs: (t: string) => h.api('POST', '/api/v2/accounts/{acct}/jobs/', job, t),
      runs: (t: string) => h.api('POST', `/api/v2/accounts/{acct}/jobs/${jobId}/run/`, { cause: 'perm' }, t),
    };
    for (const set of PERMISSION_SETS) {
      const token = await makeToken(h.store, h.accountId, set);
      for (const [key, access] of Object.entries(WRITE_ACCESS)) {
        const r = await attempts[key as keyof typeof attempts](token);
        if ((access.sets as readonly string[]).includes(set)) {
          expect(r.status, `${set} may ${access.what}`).toBeLessThan(300);
        } else {
          expect(r.status, `${set} may not ${access.what}`).toBe(403);
          expect(r.json.status.developer_message).toContain(`needs one of the permission sets ${access.sets.join(', ')}; this token has ${set}`);
        }
      }
    }
    await h.svc.runner.idle();
  });

  it('`runlens tokens create --help` shows the same sets', () => {
    const r = spawnSync(process.execPath, [CLI, 'tokens', 'create', '--help'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(oneLine(r.stdout)).toContain(oneLine(writeAccessSummary()));
  });

  it('docs/service.md lists the same sets', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'service.md'), 'utf8');
    for (const access of Object.values(WRITE_ACCESS)) {
      expect(doc).toContain(`| ${access.what} | ${access.sets.map((s) => `\`${s}\``).join(', ')} |`);
    }
  });
});
