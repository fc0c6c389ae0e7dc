/**
 * Shared store: PostgreSQL through `pg`, for several `serve` processes on one database. Deliveries are
 * claimed with FOR UPDATE SKIP LOCKED plus a lease (a killed process's claims are retaken when the
 * lease runs out); subscription rows are locked (in id order) while an attempt updates their failure
 * streak, so concurrent dispatchers never lose an update. Enqueues NOTIFY the other processes.
 */
import pg from 'pg';
import { accountIdentifier } from '../ids.js';
import { POSTGRES_MIGRATIONS } from './postgres-migrations.js';
import {
  accountFromRow, eventFromRow, jobFromRow, receiptFromRow, runFromRow, stepFromRow, subscriptionFromRow, subscriptionMatches, tokenFromRow,
} from './rows.js';
import type {
  Account, ArchivalPolicy, AttemptOutcome, AttemptStart, ClaimedDelivery, DeliveryEvent, Job, NewEvent, Page, Receipt, Run, RunLease,
  RunStep, Store, Subscription, TokenInfo, TokenRecord,
} from './types.js';
import { CUT_OFF_ERROR } from './types.js';

type Row = Record<string, unknown>;
type Q = pg.Pool | pg.PoolClient;

const MIGRATION_LOCK = 0x72756e6c; // "runl": one advisory lock id for every runlens process
const CHANNEL = 'runlens_events';

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly exclusive = false;

  /** Several serve processes share one PostgreSQL database (claims and leases). */
  async claimForServe(): Promise<void> {}
  private listener: pg.Client | null = null;

  private constructor(
    readonly pool: pg.Pool,
    private readonly url: string,
  ) {}

  /** Connects and brings the schema up to date; processes starting together wait on an advisory lock. */
  static async connect(url: string, poolSize = 10): Promise<PostgresStore> {
    // synchronous_commit on (whatever the server's default): a commit returns once its WAL is on disk,
    // so what the API acknowledged (a subscription, a run, the events a run emitted) survives a crash
    // of the PostgreSQL server, not only of serve; with it off, an immediate stop or OOM kill of the
    // server drops commits already answered.
    const pool = new pg.Pool({ connectionString: url, max: poolSize, options: '-c synchronous_commit=on' });
    pool.on('error', () => undefined); // idle-client errors surface on the next query instead of crashing
    const store = new PostgresStore(pool, url);
    try {
      await store.migrate();
    } catch (e) {
      await pool.end();
      throw e;
    }
    return store;
  }

  private async migrate(): Promise<void> {
    const c = await this.pool.connect();
    try {
      await c.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await c.query('CREATE TABLE IF NOT EXISTS runlens_schema (version INTEGER NOT NULL)');
      const r = await c.query('SELECT version FROM runlens_schema');
      let version = r.rows.length ? Number(r.rows[0].version) : 0;
      if (!r.rows.length) await c.query('INSERT INTO runlens_schema (version) VALUES (0)');
      for (; version < POSTGRES_MIGRATIONS.length; version++) {
        await c.query('BEGIN');
        await c.query(POSTGRES_MIGRATIONS[version]!);
        await c.query('UPDATE runlens_schema SET version = $1', [version + 1]);
        await c.query('COMMIT');
      }
    } catch (e) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      c.release();
    }
  }

  private async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (e) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      c.release();
    }
  }

  private async rows(q: Q, text: string, values: unknown[] = []): Promise<Row[]> {
    return (await q.query(text, values)).rows as Row[];
  }

  async watch(fn: () => void): Promise<void> {
    if (this.listener) return;
    const c = new pg.Client({ connectionString: this.url });
    c.on('error', () => undefined);
    await c.connect();
    c.on('notification', () => fn());
    await c.query(`LISTEN ${CHANNEL}`);
    this.listener = c;
  }

  async close(): Promise<void> {
    await this.listener?.end().catch(() => undefined);
    this.listener = null;
    await this.pool.end().catch(() => undefined);
  }

  async createAccount(name: string, now: number): Promise<Account> {
    return this.tx(async (c) => {
      const [r] = await this.rows(c, 'INSERT INTO accounts (name, identifier, created_at) VALUES ($1, $2, $3) RETURNING id', [name, '', now]);
      const id = Number(r!.id);
      const identifier = accountIdentifier(id);
      await c.query('UPDATE accounts SET identifier = $1 WHERE id = $2', [identifier, id]);
      return { id, name, identifier, createdAt: now };
    });
  }

  async getAccount(id: number): Promise<Account | null> {
    const [r] = await this.rows(this.pool, 'SELECT * FROM accounts WHERE id = $1', [id]);
    return r ? { id: Number(r.id), name: String(r.name), identifier: String(r.identifier), createdAt: Number(r.created_at) } : null;
  }

  async createToken(t: { accountId: number; permissionSet: string; name: string; tokenHash: string; now: number }): Promise<TokenRecord> {
    const [r] = await this.rows(this.pool, 'INSERT INTO tokens (account_id, permission_set, name, token_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id',
      [t.accountId, t.permissionSet, t.name, t.tokenHash, t.now]);
    return { id: Number(r!.id), accountId: t.accountId, permissionSet: t.permissionSet, name: t.name };
  }

  async findToken(tokenHash: string): Promise<TokenRecord | null> {
    const [r] = await this.rows(this.pool, 'SELECT id, account_id, permission_set, name FROM tokens WHERE token_hash = $1', [tokenHash]);
    return r ? { id: Number(r.id), accountId: Number(r.account_id), permissionSet: String(r.permission_set), name: String(r.name) } : null;
  }

  async listAccounts(): Promise<Account[]> {
    return (await this.rows(this.pool, 'SELECT * FROM accounts ORDER BY id')).map(accountFromRow);
  }

  async listTokens(accountId?: number): Promise<TokenInfo[]> {
    const cols = 'SELECT id, account_id, permission_set, name, created_at FROM tokens';
    const rows = accountId === undefined ? await this.rows(this.pool, `${cols} ORDER BY id`)
      : await this.rows(this.pool, `${cols} WHERE account_id = $1 ORDER BY id`, [accountId]);
    return rows.map(tokenFromRow);
  }

  async revokeToken(id: number): Promise<TokenInfo | null> {
    const [r] = await this.rows(this.pool, 'DELETE FROM tokens WHERE id = $1 RETURNING id, account_id, permission_set, name, created_at', [id]);
    return r ? tokenFromRow(r) : null;
  }

  async listJobs(accountId: number, offset: number, limit: number): Promise<Page<Job>> {
    const where = 'WHERE account_id = $1 AND deleted_at IS NULL';
    const [n] = await this.rows(this.pool, `SELECT count(*) AS n FROM jobs ${where}`, [accountId]);
    const rows = await this.rows(this.pool, `SELECT * FROM jobs ${where} ORDER BY id LIMIT $2 OFFSET $3`, [accountId, limit, offset]);
    return { items: rows.map(jobFromRow), total: Number(n!.n) };
  }

  async deleteJob(accountId: number, id: number, now: number): Promise<Job | null> {
    const [r] = await this.rows(this.pool, 'UPDATE jobs SET deleted_at = $1 WHERE account_id = $2 AND id = $3 AND deleted_at IS NULL RETURNING *', [now, accountId, id]);
    return r ? jobFromRow(r) : null;
  }

  async listRuns(accountId: number, q: { jobId?: number; offset: number; limit: number; newestFirst: boolean }): Promise<Page<Run>> {
    const where = q.jobId === undefined ? 'WHERE account_id = $1' : 'WHERE account_id = $1 AND job_id = $2';
    const args: unknown[] = q.jobId === undefined ? [accountId] : [accountId, q.jobId];
    const [n] = await this.rows(this.pool, `SELECT count(*) AS n FROM runs ${where}`, args);
    const rows = await this.rows(this.pool, `SELECT * FROM runs ${where} ORDER BY id ${q.newestFirst ? 'DESC' : ''} LIMIT $${args.length + 1} OFFSET $${args.length + 2}`,
      [...args, q.limit, q.offset]);
    return { items: rows.map(runFromRow), total: Number(n!.n) };
  }

  async findEvent(accountId: number, eventId: string): Promise<DeliveryEvent | null> {
    const [r] = await this.rows(this.pool, 'SELECT * FROM events WHERE account_id = $1 AND id = $2', [accountId, eventId]);
    return r ? eventFromRow(r) : null;
  }

  async listSubscriptions(accountId: number, offset: number, limit: number): Promise<Page<Subscription>> {
    const [n] = await this.rows(this.pool, 'SELECT count(*) AS n FROM subscriptions WHERE account_id = $1', [accountId]);
    const rows = await this.rows(this.pool, 'SELECT * FROM subscriptions WHERE account_id = $1 ORDER BY created_at, seq LIMIT $2 OFFSET $3', [accountId, limit, offset]);
    return { items: rows.map(subscriptionFromRow), total: Number(n!.n) };
  }

  async getSubscription(accountId: number, id: string): Promise<Subscription | null> {
    const [r] = await this.rows(this.pool, 'SELECT * FROM subscriptions WHERE account_id = $1 AND id = $2', [accountId, id]);
    return r ? subscriptionFromRow(r) : null;
  }

  async insertSubscription(s: Subscription): Promise<void> {
    await this.pool.query(`INSERT INTO subscriptions (id, account_id, name, description, client_url, active, archived, deactivate_reason,
      event_types, job_ids, hmac_secret, created_at, updated_at, dispatched_at, http_status_code, consecutive_failures, failing_since)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`, subValues(s));
  }

  async updateSubscription(accountId: number, id: string, change: (current: Subscription) => Subscription): Promise<Subscription | null> {
    // The dispatcher locks an event, then its subscription; this locks them the other way round.
    return againOnConflict(() => this.tx(async (c) => {
      const [r] = await this.rows(c, 'SELECT * FROM subscriptions WHERE account_id = $1 AND id = $2 FOR UPDATE', [accountId, id]);
      if (!r) return null;
      const next = change(subscriptionFromRow(r));
      await this.writeSubscription(c, next);
      // Made inactive or archived: its pending deliveries are dropped (in flight ones included: their
      // outcome, unless a success, leaves them cancelled), so that making it active again revives none.
      if (!next.active || next.archived) {
        await c.query(`UPDATE events SET status = 'cancelled', lease_until = NULL WHERE subscription_id = $1 AND status = 'pending' AND NOT test`, [next.id]);
      }
      return next;
    }));
  }

  private async writeSubscription(c: pg.PoolClient, s: Subscription): Promise<void> {
    await c.query(`UPDATE subscriptions SET name = $3, description = $4, client_url = $5, active = $6, archived = $7,
      deactivate_reason = $8, event_types = $9, job_ids = $10, updated_at = $11, dispatched_at = $12, http_status_code = $13,
      consecutive_failures = $14, failing_since = $15 WHERE id = $1 AND account_id = $2`,
    [s.id, s.accountId, s.name, s.description, s.clientUrl, s.active, s.archived, s.deactivateReason, JSON.stringify(s.eventTypes),
      JSON.stringify(s.jobIds), s.updatedAt, s.dispatchedAt, s.httpStatusCode, s.consecutiveFailures, s.failingSince]);
  }

  async deleteSubscription(accountId: number, id: string): Promise<boolean> {
    return againOnConflict(() => this.tx(async (c) => {
      const r = await c.query('DELETE FROM subscriptions WHERE account_id = $1 AND id = $2', [accountId, id]);
      if (r.rowCount) {
        // Its delivery log goes with it (pending deliveries included).
        await c.query('DELETE FROM receipts WHERE event_id IN (SELECT id FROM events WHERE subscription_id = $1)', [id]);
        await c.query('DELETE FROM events WHERE subscription_id = $1', [id]);
      }
      return Boolean(r.rowCount);
    }));
  }

  async createJob(j: Omit<Job, 'id'>): Promise<Job> {
    const [r] = await this.rows(this.pool, `INSERT INTO jobs (account_id, name, project_id, environment_id, project_name, environment_name,
      tool_version, execute_steps, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
    [j.accountId, j.name, j.projectId, j.environmentId, j.projectName, j.environmentName, j.toolVersion, JSON.stringify(j.executeSteps), j.createdAt]);
    return { ...j, id: Number(r!.id) };
  }

  async getJob(accountId: number, id: number): Promise<Job | null> {
    const [r] = await this.rows(this.pool, 'SELECT * FROM jobs WHERE account_id = $1 AND id = $2', [accountId, id]);
    return r ? jobFromRow(r) : null;
  }

  async createRun(r: Omit<Run, 'id'>, lease: RunLease, emit: (run: Run) => NewEvent[]): Promise<Run> {
    return this.tx(async (c) => {
      const [row] = await this.rows(c, `INSERT INTO runs (account_id, job_id, status, status_message, cause, created_at, started_at,
        finished_at, errored_at, lease_owner, lease_until) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
      [r.accountId, r.jobId, r.status, r.statusMessage, r.cause, r.createdAt, r.startedAt, r.finishedAt, r.erroredAt, lease.owner, lease.until]);
      const run = { ...r, id: Number(row!.id) };
      for (const e of emit(run)) await this.enqueueWith(c, e);
      return run;
    });
  }

  async getRun(accountId: number, id: number): Promise<Run | null> {
    const [r] = await this.rows(this.pool, 'SELECT * FROM runs WHERE account_id = $1 AND id = $2', [accountId, id]);
    return r ? runFromRow(r) : null;
  }

  /**
   * Every write of a run's (its row, its steps, its artifacts, its events) goes through here: it is made
   * only while `owner` holds the run and the run has not finished, with the run's row locked so that no
   * other process takes the run over (claimAbandonedRuns) before the write commits.
   */
  private async whileHeld(runId: number, owner: string, write: (c: pg.PoolClient) => Promise<void>): Promise<boolean> {
    return this.tx(async (c) => {
      const held = await c.query('SELECT 1 FROM runs WHERE id = $1 AND lease_owner = $2 AND finished_at IS NULL FOR UPDATE', [runId, owner]);
      if (!held.rowCount) return false;
      await write(c);
      return true;
    });
  }

  async updateRun(r: Run, owner: string, events: NewEvent[]): Promise<boolean> {
    return this.whileHeld(r.id, owner, async (c) => {
      await c.query('UPDATE runs SET status = $1, status_message = $2, started_at = $3, finished_at = $4, errored_at = $5 WHERE id = $6',
        [r.status, r.statusMessage, r.startedAt, r.finishedAt, r.erroredAt, r.id]);
      for (const e of events) await this.enqueueWith(c, e);
    });
  }

  async renewRunLeases(owner: string, runIds: number[], until: number): Promise<void> {
    if (!runIds.length) return;
    await this.pool.query('UPDATE runs SET lease_until = $2 WHERE lease_owner = $1 AND finished_at IS NULL AND id = ANY($3::bigint[])',
      [owner, until, runIds]);
  }

  async claimAbandonedRuns(now: number | null, lease: RunLease): Promise<Run[]> {
    const rows = await this.rows(this.pool, `UPDATE runs SET lease_owner = $1, lease_until = $2 WHERE id IN (
        SELECT id FROM runs WHERE finished_at IS NULL AND lease_owner IS DISTINCT FROM $1
          AND ($3::bigint IS NULL OR lease_until IS NULL OR lease_until < $3)
        FOR UPDATE SKIP LOCKED)
      RETURNING *`, [lease.owner, lease.until, now]);
    return rows.map(runFromRow).sort((a, b) => a.id - b.id);
  }

  async saveRunStep(s: RunStep, owner: string): Promise<boolean> {
    return this.whileHeld(s.runId, owner, async (c) => {
      await c.query(`INSERT INTO run_steps (run_id, idx, name, status, exit_code, logs, started_at, finished_at, artifact, telemetry_notes)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (run_id, idx) DO UPDATE SET status = excluded.status,
      exit_code = excluded.exit_code, logs = excluded.logs, started_at = excluded.started_at, finished_at = excluded.finished_at,
      artifact = excluded.artifact, telemetry_notes = excluded.telemetry_notes`,
      [s.runId, s.index, s.name, s.status, s.exitCode, s.logs, s.startedAt, s.finishedAt, s.artifact, JSON.stringify(s.telemetryNotes)]);
    });
  }

  async listRunSteps(runId: number): Promise<RunStep[]> {
    return (await this.rows(this.pool, 'SELECT * FROM run_steps WHERE run_id = $1 ORDER BY idx', [runId])).map(stepFromRow);
  }

  async putArtifact(runId: number, step: number, name: string, bytes: Buffer, now: number, owner: string): Promise<boolean> {
    return this.whileHeld(runId, owner, async (c) => {
      await c.query(`INSERT INTO artifacts (run_id, step, name, bytes, created_at) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (run_id, name) DO UPDATE SET step = excluded.step, bytes = excluded.bytes, created_at = excluded.created_at`,
      [runId, step, name, bytes, now]);
    });
  }

  async getArtifact(accountId: number, runId: number, name: string): Promise<Buffer | null> {
    const [r] = await this.rows(this.pool, `SELECT a.bytes FROM artifacts a JOIN runs r ON r.id = a.run_id
      WHERE r.account_id = $1 AND a.run_id = $2 AND a.name = $3`, [accountId, runId, name]);
    return r ? (r.bytes as Buffer) : null;
  }

  async enqueueEvent(e: NewEvent): Promise<DeliveryEvent[]> {
    return this.enqueueWith(this.pool, e);
  }

  /**
   * Reads the matching subscriptions, then one atomic statement inserts every delivery and notifies
   * the other processes (at commit, inside a transaction). A subscription changed in between is
   * rechecked when the delivery is claimed.
   */
  private async enqueueWith(q: Q, e: NewEvent): Promise<DeliveryEvent[]> {
    const subs = (await this.rows(q, 'SELECT * FROM subscriptions WHERE account_id = $1 AND active AND NOT archived', [e.accountId]))
      .map(subscriptionFromRow)
      .filter((s) => subscriptionMatches(s, e.eventType, e.jobId));
    const out = subs.map((s) => {
      const id = e.newEventId();
      return { id, accountId: e.accountId, subscriptionId: s.id, jobId: e.jobId, eventType: e.eventType as string, payload: e.payloadFor(s, id),
        status: 'pending' as const, attempts: 0, nextAttemptAt: e.now, httpStatusCode: 0, createdAt: e.now, test: false };
    });
    if (!out.length) return out;
    await q.query(`WITH ins AS (
        INSERT INTO events (id, account_id, subscription_id, job_id, event_type, payload, status, attempts, next_attempt_at, http_status_code,
          created_at, test)
        SELECT id, $2, sub, $3, $4, payload, 'pending', 0, $5, 0, $5, false FROM unnest($1::text[], $6::text[], $7::text[]) AS v(id, sub, payload)
        RETURNING 1)
      SELECT pg_notify('${CHANNEL}', (SELECT count(*) FROM ins)::text)`,
    [out.map((x) => x.id), e.accountId, e.jobId, e.eventType, e.now, out.map((x) => x.subscriptionId), out.map((x) => x.payload)]);
    return out;
  }

  async insertTestEvent(ev: DeliveryEvent): Promise<void> {
    await this.pool.query(`INSERT INTO events (id, account_id, subscription_id, job_id, event_type, payload, status, attempts, next_attempt_at,
      http_status_code, created_at, test) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, true)`,
    [ev.id, ev.accountId, ev.subscriptionId, ev.jobId, ev.eventType, ev.payload, ev.status, ev.attempts, ev.nextAttemptAt, ev.httpStatusCode, ev.createdAt]);
  }

  async claimDue(now: number, limit: number, leaseUntil: number, owner: string, skip: readonly string[] = []): Promise<ClaimedDelivery[]> {
    const rows = await this.rows(this.pool, `
      WITH due AS (
        SELECT id FROM events
        WHERE status = 'pending' AND NOT test AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
          AND subscription_id <> ALL($5::text[])
        ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED),
      claimed AS (
        UPDATE events e SET lease_until = $3, lease_owner = $4 FROM due WHERE e.id = due.id RETURNING e.*)
      SELECT claimed.*, s.client_url AS s_url, s.hmac_secret AS s_secret, s.active AS s_active, s.archived AS s_archived,
        (SELECT r.id FROM receipts r WHERE r.event_id = claimed.id AND r.http_status_code = 0 AND r.error_info IS NULL LIMIT 1) AS cut_off_receipt
      FROM claimed LEFT JOIN subscriptions s ON s.id = claimed.subscription_id`, [now, limit, leaseUntil, owner, skip]);
    const dropped = rows.filter((r) => r.s_url === null || !r.s_active || r.s_archived).map((r) => String(r.id));
    if (dropped.length) {
      // Deliveries of subscriptions made inactive, archived or deleted since the event are dropped, not sent.
      await this.pool.query(`UPDATE events SET status = 'cancelled', lease_until = NULL WHERE id = ANY($1) AND lease_owner = $2`, [dropped, owner]);
    }
    return rows
      .filter((r) => !dropped.includes(String(r.id)))
      .sort((a, b) => Number(a.next_attempt_at) - Number(b.next_attempt_at))
      .map((r) => ({ event: eventFromRow(r), clientUrl: String(r.s_url), hmacSecret: String(r.s_secret), cutOffReceiptId: (r.cut_off_receipt as string | null) ?? null }));
  }

  async nextDueAt(skip: readonly string[] = []): Promise<number | null> {
    const [r] = await this.rows(this.pool, `SELECT next_attempt_at AS t FROM events WHERE status = 'pending' AND NOT test AND lease_until IS NULL
      AND subscription_id <> ALL($1::text[]) ORDER BY next_attempt_at LIMIT 1`, [skip]);
    return r ? Number(r.t) : null;
  }

  /** One statement: earlier attempts left without an outcome marked cut off, attempts counted, receipts written. */
  async beginAttempts(starts: AttemptStart[]): Promise<string[]> {
    if (!starts.length) return [];
    const rows = await this.rows(this.pool, `
      WITH v AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::text[], $8::text[])
          AS v(eid, sub, owner, rid, attempt, dispatched, headers, cut)),
      cut AS (
        UPDATE receipts r SET error_info = $9 FROM v WHERE r.id = v.cut AND r.http_status_code = 0 AND r.error_info IS NULL RETURNING 1),
      ev AS (
        UPDATE events e SET attempts = v.attempt FROM v WHERE e.id = v.eid AND (e.lease_owner IS NULL OR e.lease_owner = v.owner) RETURNING e.id)
      INSERT INTO receipts (id, event_id, subscription_id, attempt, dispatched_at, http_status_code, error_info, request_headers, response_body,
        duration_ms)
      SELECT v.rid, v.eid, v.sub, v.attempt, v.dispatched, 0, NULL, v.headers, '', 0 FROM v JOIN ev ON ev.id = v.eid
      RETURNING event_id`,
    [starts.map((a) => a.eventId), starts.map((a) => a.subscriptionId), starts.map((a) => a.owner), starts.map((a) => a.receiptId),
      starts.map((a) => a.attempt), starts.map((a) => a.dispatchedAt), starts.map((a) => JSON.stringify(a.requestHeaders)),
      starts.map((a) => a.cutOffReceiptId), CUT_OFF_ERROR]);
    return rows.map((r) => String(r.event_id));
  }

  /**
   * One statement (no transaction held open across round trips, so subscription rows stay locked only
   * for the statement itself): the receipts (the rows beginAttempts wrote get their outcome); the events (only the outcome
   * of an event's latest attempt, from the claim's holder, moves it); then, per subscription, the state rules of subscription-state.ts
   * applied in SQL to the batch in order, on the row locked in id order (no deadlocks between processes).
   */
  async recordAttempts(outcomes: AttemptOutcome[], policy: ArchivalPolicy): Promise<void> {
    if (!outcomes.length) return;
    const rc = outcomes.map((o) => o.receipt);
    const values = [
      rc.map((r) => r.id), rc.map((r) => r.eventId), rc.map((r) => r.subscriptionId), rc.map((r) => r.attempt), rc.map((r) => r.dispatchedAt),
      rc.map((r) => r.httpStatusCode), rc.map((r) => r.errorInfo), rc.map((r) => JSON.stringify(r.requestHeaders)), rc.map((r) => r.responseBody),
      rc.map((r) => r.durationMs), outcomes.map((o) => (o.success ? 'succeeded' : o.nextAttemptAt === null ? 'failed' : 'pending')),
      outcomes.map((o) => o.nextAttemptAt ?? o.now), outcomes.map((o) => o.owner), outcomes.map((o) => o.success),
      outcomes.map((o) => o.nextAttemptAt === null), outcomes.map((o) => o.now), policy.maxConsecutiveFailures, policy.maxFailingMicros,
    ];
    await againOnConflict(() => this.pool.query(RECORD_ATTEMPTS_SQL, values));
  }

  async releaseClaims(owner?: string, eventIds?: readonly string[]): Promise<number> {
    const sql = `UPDATE events SET lease_until = NULL, lease_owner = NULL WHERE status = 'pending' AND lease_until IS NOT NULL`;
    const r = eventIds ? await this.pool.query(`${sql} AND lease_owner = $1 AND id = ANY($2::text[])`, [owner ?? null, eventIds])
      : owner ? await this.pool.query(`${sql} AND lease_owner = $1`, [owner]) : await this.pool.query(sql);
    return r.rowCount ?? 0;
  }

  async listEvents(accountId: number, subscriptionId: string, offset: number, limit: number): Promise<Page<DeliveryEvent>> {
    const [n] = await this.rows(this.pool, 'SELECT count(*) AS n FROM events WHERE account_id = $1 AND subscription_id = $2', [accountId, subscriptionId]);
    const rows = await this.rows(this.pool, `SELECT * FROM events WHERE account_id = $1 AND subscription_id = $2
      ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4`, [accountId, subscriptionId, limit, offset]);
    return { items: rows.map(eventFromRow), total: Number(n!.n) };
  }

  async getEvent(accountId: number, subscriptionId: string, eventId: string): Promise<DeliveryEvent | null> {
    const [r] = await this.rows(this.pool, 'SELECT * FROM events WHERE account_id = $1 AND subscription_id = $2 AND id = $3', [accountId, subscriptionId, eventId]);
    return r ? eventFromRow(r) : null;
  }

  async listReceipts(eventId: string): Promise<Receipt[]> {
    return (await this.rows(this.pool, 'SELECT * FROM receipts WHERE event_id = $1 ORDER BY attempt, dispatched_at', [eventId])).map(receiptFromRow);
  }

  async failStrandedTests(before: number): Promise<number> {
    return (await this.pool.query(`UPDATE events SET status = 'failed' WHERE test AND status = 'pending' AND created_at < $1`, [before])).rowCount ?? 0;
  }

  async prune(before: number): Promise<number> {
    return this.tx(async (c) => {
      const where = `created_at < $1 AND (status <> 'pending' OR test)`;
      await c.query(`DELETE FROM receipts WHERE event_id IN (SELECT id FROM events WHERE ${where})`, [before]);
      return (await c.query(`DELETE FROM events WHERE ${where}`, [before])).rowCount ?? 0;
    });
  }
}

/**
 * Runs a statement or transaction again when PostgreSQL aborted it as one side of a deadlock or a
 * serialization failure: it changed nothing, and the other side has gone on.
 */
async function againOnConflict<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      const code = (e as { code?: string }).code;
      if ((code !== '40P01' && code !== '40001') || attempt >= 5) throw e;
    }
  }
}

/** See recordAttempts. $17 = archive after this many failed deliveries, $18 = after this many microseconds. */
const RECORD_ATTEMPTS_SQL = `
WITH v AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::int[], $7::text[], $8::text[], $9::text[],
    $10::float8[], $11::text[], $12::bigint[], $13::text[], $14::bool[], $15::bool[], $16::bigint[]) WITH ORDINALITY
    AS v(rid, eid, sub, attempt, dispatched, code, err, headers, body, dur, status, next, owner, success, final, now, ord)),
rec AS (
  INSERT INTO receipts (id, event_id, subscription_id, attempt, dispatched_at, http_status_code, error_info, request_headers,
    response_body, duration_ms)
  SELECT rid, eid, sub, attempt, dispatched, code, err, headers, body, dur FROM v WHERE EXISTS (SELECT 1 FROM events WHERE id = v.eid)
  ON CONFLICT (id) DO UPDATE SET http_status_code = excluded.http_status_code, error_info = excluded.error_info,
    response_body = excluded.response_body, duration_ms = excluded.duration_ms
  RETURNING 1),
ev AS (
  UPDATE events e SET status = v.status, next_attempt_at = v.next, http_status_code = v.code, lease_until = NULL, lease_owner = NULL
  FROM v WHERE e.id = v.eid AND e.attempts = v.attempt AND (e.lease_owner IS NULL OR e.lease_owner = v.owner) AND (e.status = 'pending' OR v.success)
  RETURNING e.id, e.test),
m AS (SELECT v.*, ev.test FROM v JOIN ev ON ev.id = v.eid),
ls AS (SELECT sub, max(ord) FILTER (WHERE success AND NOT test) AS last_succ, max(ord) AS last_any FROM m GROUP BY sub),
agg AS (
  SELECT m.sub, ls.last_succ IS NOT NULL AS has_succ,
    count(*) FILTER (WHERE NOT m.test AND NOT m.success AND m.final AND m.ord > coalesce(ls.last_succ, 0)) AS fails,
    min(m.dispatched) FILTER (WHERE NOT m.test AND NOT m.success AND m.final AND m.ord > coalesce(ls.last_succ, 0)) AS first_fail,
    max(m.code) FILTER (WHERE m.ord = ls.last_any) AS last_code,
    max(m.dispatched) FILTER (WHERE m.ord = ls.last_any) AS last_dispatched
  FROM m JOIN ls ON ls.sub = m.sub GROUP BY m.sub, ls.last_succ),
locked AS (SELECT s.* FROM subscriptions s WHERE s.id IN (SELECT sub FROM agg) ORDER BY s.id FOR UPDATE),
-- The streak at each failed delivery (an attempt that failed and will not be retried), to find where
-- archival was first reached (a later success in the same batch does not undo it); an attempt that
-- will be retried moves neither the streak nor its start. seg = successes so far; segment 0 continues
-- the stored streak.
w AS (
  SELECT m.*, (NOT m.test AND NOT m.success AND m.final) AS is_fail,
    count(*) FILTER (WHERE m.success AND NOT m.test) OVER (PARTITION BY m.sub ORDER BY m.ord) AS seg
  FROM m),
w2 AS (
  SELECT w.*,
    sum(CASE WHEN w.is_fail THEN 1 ELSE 0 END) OVER (PARTITION BY w.sub, w.seg ORDER BY w.ord) AS run_fails,
    min(CASE WHEN w.is_fail THEN w.dispatched END) OVER (PARTITION BY w.sub, w.seg ORDER BY w.ord) AS run_first
  FROM w),
trig AS (
  SELECT w2.sub, w2.ord, w2.now,
    CASE WHEN w2.seg = 0 THEN l.consecutive_failures ELSE 0 END + w2.run_fails AS cf_at,
    CASE WHEN w2.seg = 0 THEN coalesce(l.failing_since, w2.run_first) ELSE w2.run_first END AS fs_at
  FROM w2 JOIN locked l ON l.id = w2.sub WHERE w2.is_fail),
first_trig AS (
  SELECT DISTINCT ON (sub) sub, cf_at >= $17 AS by_count, floor((now - fs_at) / 86400000000) AS days
  FROM trig WHERE cf_at >= $17 OR (fs_at IS NOT NULL AND now - fs_at >= $18)
  ORDER BY sub, ord),
calc AS (
  SELECT l.id, a.last_code, a.last_dispatched, l.archived AS was_archived, l.deactivate_reason AS old_reason,
    ft.sub IS NOT NULL AS reached, ft.by_count, ft.days,
    CASE WHEN a.has_succ THEN a.fails ELSE l.consecutive_failures + a.fails END AS cf,
    CASE WHEN a.has_succ THEN a.first_fail ELSE coalesce(l.failing_since, a.first_fail) END AS fs
  FROM locked l JOIN agg a ON a.sub = l.id LEFT JOIN first_trig ft ON ft.sub = l.id),
upd AS (
  UPDATE subscriptions s SET http_status_code = c.last_code, dispatched_at = c.last_dispatched, consecutive_failures = c.cf,
    failing_since = c.fs, archived = c.was_archived OR c.reached,
    deactivate_reason = CASE
      WHEN c.was_archived OR NOT c.reached THEN c.old_reason
      WHEN c.by_count THEN 'archived after ' || $17 || ' consecutive failed deliveries'
      ELSE 'archived after ' || c.days || ' days of failed deliveries' END
  FROM calc c WHERE s.id = c.id
  RETURNING s.id, s.archived),
cancel AS (
  UPDATE events SET status = 'cancelled', lease_until = NULL
  WHERE subscription_id IN (SELECT id FROM upd WHERE archived) AND status = 'pending' AND NOT test AND id NOT IN (SELECT eid FROM v)
  RETURNING 1)
SELECT (SELECT count(*) FROM rec) AS receipts, (SELECT count(*) FROM upd) AS subscriptions, (SELECT count(*) FROM cancel) AS cancelled`;

function subValues(s: Subscription): unknown[] {
  return [s.id, s.accountId, s.name, s.description, s.clientUrl, s.active, s.archived, s.deactivateReason, JSON.stringify(s.eventTypes),
    JSON.stringify(s.jobIds), s.hmacSecret, s.createdAt, s.updatedAt, s.dispatchedAt, s.httpStatusCode, s.consecutiveFailures, s.failingSince];
}
