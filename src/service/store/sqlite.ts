/**
 * Embedded store: better-sqlite3 in WAL mode under the data folder, created and migrated on first open.
 * better-sqlite3 is synchronous, so every method is one short transaction; the async signatures are
 * the Store contract shared with PostgreSQL.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { UsageError } from '../../errors.js';
import { accountIdentifier } from '../ids.js';
import { applyAttempt } from '../subscription-state.js';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.js';
import {
  accountFromRow, eventFromRow, jobFromRow, receiptFromRow, runFromRow, stepFromRow, subscriptionFromRow, subscriptionMatches, tokenFromRow,
} from './rows.js';
import type {
  Account, ArchivalPolicy, AttemptOutcome, AttemptStart, ClaimedDelivery, DeliveryEvent, Job, NewEvent, Page, Receipt, Run, RunLease,
  RunStep, Store, Subscription, TokenInfo, TokenRecord,
} from './types.js';
import { CUT_OFF_ERROR } from './types.js';
import { sqliteFileIn } from './sqlite-file.js';
import { makeFolders } from '../../folders.js';

type Row = Record<string, unknown>;

/** The deliveries of subscriptions to leave alone (a claim's or due-time look-up's `skip`); none: the plain statement. */
const skipSql = (skip: readonly string[], alias: string): string =>
  skip.length ? ` AND ${alias}subscription_id NOT IN (SELECT value FROM json_each(?))` : '';
const skipArgs = (skip: readonly string[]): string[] => (skip.length ? [JSON.stringify(skip)] : []);

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly exclusive = true;
  readonly db: Database.Database;

  /** the data folder (null in memory) */
  private readonly dir: string | null;
  private serveLock: Database.Database | undefined;

  /** `path` is a data folder (the database is `runlens.sqlite` inside) or `:memory:`. */
  constructor(path: string) {
    let file = path;
    this.dir = path === ':memory:' ? null : path;
    if (path !== ':memory:') {
      makeFolders(path);
      file = sqliteFileIn(path);
    }
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // NORMAL in WAL keeps commits durable across process crashes (kill -9); only an OS crash can lose the last ones.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    // `accounts create` and `tokens create` write while `serve` runs: wait for the lock instead of failing.
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
  }

  private readonly statements = new Map<string, Database.Statement>();
  /** Prepared statements are cached: compiling SQL on every call costs more than running it. */
  private sql(text: string): Database.Statement {
    let st = this.statements.get(text);
    if (!st) {
      st = this.db.prepare(text);
      this.statements.set(text, st);
    }
    return st;
  }

  private migrate(): void {
    const version = Number(this.db.pragma('user_version', { simple: true }));
    for (let v = version; v < SQLITE_MIGRATIONS.length; v++) {
      this.db.transaction(() => {
        this.db.exec(SQLITE_MIGRATIONS[v]!);
        this.db.pragma(`user_version = ${v + 1}`);
      }).immediate();
    }
  }

  /**
   * A lock file held by SQLite's own file lock for as long as this process has it open (released when
   * the process ends, kill -9 included): a second serve on the folder finds it taken. The database
   * itself stays open to the administration commands, which write while serve runs.
   */
  async claimForServe(): Promise<void> {
    if (this.dir === null || this.serveLock) return;
    const lock = new Database(join(this.dir, 'serve.lock'), { timeout: 0 });
    try {
      lock.pragma('locking_mode = EXCLUSIVE');
      lock.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder');
      lock.prepare('INSERT INTO holder VALUES (?)').run(process.pid);
    } catch (e) {
      lock.close();
      if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
      throw new UsageError(`another runlens serve is using the data folder ${this.dir}: one serve per folder (several serve processes share a PostgreSQL database: --database-url)`);
    }
    this.serveLock = lock;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
    this.serveLock?.close();
    this.serveLock = undefined;
  }

  async createAccount(name: string, now: number): Promise<Account> {
    return this.db.transaction(() => {
      const id = Number(this.sql('INSERT INTO accounts (name, identifier, created_at) VALUES (?, ?, ?)').run(name, '', now).lastInsertRowid);
      const identifier = accountIdentifier(id);
      this.sql('UPDATE accounts SET identifier = ? WHERE id = ?').run(identifier, id);
      return { id, name, identifier, createdAt: now };
    }).immediate();
  }

  async getAccount(id: number): Promise<Account | null> {
    const r = this.sql('SELECT * FROM accounts WHERE id = ?').get(id) as Row | undefined;
    return r ? { id: Number(r.id), name: String(r.name), identifier: String(r.identifier), createdAt: Number(r.created_at) } : null;
  }

  async createToken(t: { accountId: number; permissionSet: string; name: string; tokenHash: string; now: number }): Promise<TokenRecord> {
    const info = this.db
      .prepare('INSERT INTO tokens (account_id, permission_set, name, token_hash, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(t.accountId, t.permissionSet, t.name, t.tokenHash, t.now);
    return { id: Number(info.lastInsertRowid), accountId: t.accountId, permissionSet: t.permissionSet, name: t.name };
  }

  async findToken(tokenHash: string): Promise<TokenRecord | null> {
    const r = this.sql('SELECT id, account_id, permission_set, name FROM tokens WHERE token_hash = ?').get(tokenHash) as Row | undefined;
    return r ? { id: Number(r.id), accountId: Number(r.account_id), permissionSet: String(r.permission_set), name: String(r.name) } : null;
  }

  async listAccounts(): Promise<Account[]> {
    return (this.sql('SELECT * FROM accounts ORDER BY id').all() as Row[]).map(accountFromRow);
  }

  async listTokens(accountId?: number): Promise<TokenInfo[]> {
    const cols = 'SELECT id, account_id, permission_set, name, created_at FROM tokens';
    const rows = accountId === undefined ? this.sql(`${cols} ORDER BY id`).all() : this.sql(`${cols} WHERE account_id = ? ORDER BY id`).all(accountId);
    return (rows as Row[]).map(tokenFromRow);
  }

  async revokeToken(id: number): Promise<TokenInfo | null> {
    const r = this.sql('DELETE FROM tokens WHERE id = ? RETURNING id, account_id, permission_set, name, created_at').get(id) as Row | undefined;
    return r ? tokenFromRow(r) : null;
  }

  async listJobs(accountId: number, offset: number, limit: number): Promise<Page<Job>> {
    const where = 'WHERE account_id = ? AND deleted_at IS NULL';
    const total = Number((this.sql(`SELECT count(*) AS n FROM jobs ${where}`).get(accountId) as Row).n);
    const rows = this.sql(`SELECT * FROM jobs ${where} ORDER BY id LIMIT ? OFFSET ?`).all(accountId, limit, offset) as Row[];
    return { items: rows.map(jobFromRow), total };
  }

  async deleteJob(accountId: number, id: number, now: number): Promise<Job | null> {
    const r = this.sql('UPDATE jobs SET deleted_at = ? WHERE account_id = ? AND id = ? AND deleted_at IS NULL RETURNING *').get(now, accountId, id) as Row | undefined;
    return r ? jobFromRow(r) : null;
  }

  async listRuns(accountId: number, q: { jobId?: number; offset: number; limit: number; newestFirst: boolean }): Promise<Page<Run>> {
    const where = q.jobId === undefined ? 'WHERE account_id = ?' : 'WHERE account_id = ? AND job_id = ?';
    const args = q.jobId === undefined ? [accountId] : [accountId, q.jobId];
    const total = Number((this.sql(`SELECT count(*) AS n FROM runs ${where}`).get(...args) as Row).n);
    const rows = this.sql(`SELECT * FROM runs ${where} ORDER BY id ${q.newestFirst ? 'DESC' : ''} LIMIT ? OFFSET ?`).all(...args, q.limit, q.offset) as Row[];
    return { items: rows.map(runFromRow), total };
  }

  async findEvent(accountId: number, eventId: string): Promise<DeliveryEvent | null> {
    const r = this.sql('SELECT * FROM events WHERE account_id = ? AND id = ?').get(accountId, eventId) as Row | undefined;
    return r ? eventFromRow(r) : null;
  }

  async listSubscriptions(accountId: number, offset: number, limit: number): Promise<Page<Subscription>> {
    const total = Number((this.sql('SELECT count(*) AS n FROM subscriptions WHERE account_id = ?').get(accountId) as Row).n);
    const rows = this.db
      .prepare('SELECT * FROM subscriptions WHERE account_id = ? ORDER BY created_at, rowid LIMIT ? OFFSET ?')
      .all(accountId, limit, offset) as Row[];
    return { items: rows.map(subscriptionFromRow), total };
  }

  async getSubscription(accountId: number, id: string): Promise<Subscription | null> {
    const r = this.sql('SELECT * FROM subscriptions WHERE account_id = ? AND id = ?').get(accountId, id) as Row | undefined;
    return r ? subscriptionFromRow(r) : null;
  }

  async insertSubscription(s: Subscription): Promise<void> {
    this.sql(`INSERT INTO subscriptions (id, account_id, name, description, client_url, active, archived, deactivate_reason,
      event_types, job_ids, hmac_secret, created_at, updated_at, dispatched_at, http_status_code, consecutive_failures, failing_since)
      VALUES (@id, @account_id, @name, @description, @client_url, @active, @archived, @deactivate_reason, @event_types, @job_ids,
      @hmac_secret, @created_at, @updated_at, @dispatched_at, @http_status_code, @consecutive_failures, @failing_since)`).run(subParams(s));
  }

  async updateSubscription(accountId: number, id: string, change: (current: Subscription) => Subscription): Promise<Subscription | null> {
    return this.db.transaction(() => {
      const r = this.sql('SELECT * FROM subscriptions WHERE account_id = ? AND id = ?').get(accountId, id) as Row | undefined;
      if (!r) return null;
      const next = change(subscriptionFromRow(r));
      this.writeSubscription(next);
      if (!next.active || next.archived) this.cancelPending(next.id);
      return next;
    }).immediate();
  }

  /**
   * A subscription made inactive or archived drops its pending deliveries (in flight ones included: their
   * outcome, unless a success, leaves them cancelled), so that making it active again revives none.
   */
  private cancelPending(subscriptionId: string): void {
    this.sql(`UPDATE events SET status = 'cancelled', lease_until = NULL WHERE subscription_id = ? AND status = 'pending' AND test = 0`).run(subscriptionId);
  }

  private writeSubscription(s: Subscription): void {
    this.sql(`UPDATE subscriptions SET name = @name, description = @description, client_url = @client_url, active = @active,
      archived = @archived, deactivate_reason = @deactivate_reason, event_types = @event_types, job_ids = @job_ids,
      updated_at = @updated_at, dispatched_at = @dispatched_at, http_status_code = @http_status_code,
      consecutive_failures = @consecutive_failures, failing_since = @failing_since WHERE id = @id AND account_id = @account_id`).run(subParams(s));
  }

  async deleteSubscription(accountId: number, id: string): Promise<boolean> {
    return this.db.transaction(() => {
      const n = this.sql('DELETE FROM subscriptions WHERE account_id = ? AND id = ?').run(accountId, id).changes;
      if (n) {
        // Its delivery log goes with it (pending deliveries included).
        this.sql('DELETE FROM receipts WHERE event_id IN (SELECT id FROM events WHERE subscription_id = ?)').run(id);
        this.sql('DELETE FROM events WHERE subscription_id = ?').run(id);
      }
      return n > 0;
    }).immediate();
  }

  async createJob(j: Omit<Job, 'id'>): Promise<Job> {
    const info = this.sql(`INSERT INTO jobs (account_id, name, project_id, environment_id, project_name, environment_name,
      tool_version, execute_steps, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(j.accountId, j.name, j.projectId, j.environmentId, j.projectName, j.environmentName, j.toolVersion, JSON.stringify(j.executeSteps), j.createdAt);
    return { ...j, id: Number(info.lastInsertRowid) };
  }

  async getJob(accountId: number, id: number): Promise<Job | null> {
    const r = this.sql('SELECT * FROM jobs WHERE account_id = ? AND id = ?').get(accountId, id) as Row | undefined;
    return r ? jobFromRow(r) : null;
  }

  async createRun(r: Omit<Run, 'id'>, lease: RunLease, emit: (run: Run) => NewEvent[]): Promise<Run> {
    return this.db.transaction(() => {
      const info = this.sql(`INSERT INTO runs (account_id, job_id, status, status_message, cause, created_at, started_at, finished_at, errored_at,
        lease_owner, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(r.accountId, r.jobId, r.status, r.statusMessage, r.cause, r.createdAt, r.startedAt, r.finishedAt, r.erroredAt, lease.owner, lease.until);
      const run = { ...r, id: Number(info.lastInsertRowid) };
      for (const e of emit(run)) this.enqueueInTransaction(e);
      return run;
    }).immediate();
  }

  async getRun(accountId: number, id: number): Promise<Run | null> {
    const r = this.sql('SELECT * FROM runs WHERE account_id = ? AND id = ?').get(accountId, id) as Row | undefined;
    return r ? runFromRow(r) : null;
  }

  /**
   * Every write of a run's (its row, its steps, its artifacts, its events) goes through here: it is made
   * only while `owner` holds the run and the run has not finished, in one transaction with that check.
   */
  private whileHeld(runId: number, owner: string, write: () => void): boolean {
    return this.db.transaction(() => {
      if (!this.sql('SELECT 1 FROM runs WHERE id = ? AND lease_owner = ? AND finished_at IS NULL').get(runId, owner)) return false;
      write();
      return true;
    }).immediate();
  }

  async updateRun(r: Run, owner: string, events: NewEvent[]): Promise<boolean> {
    return this.whileHeld(r.id, owner, () => {
      this.sql('UPDATE runs SET status = ?, status_message = ?, started_at = ?, finished_at = ?, errored_at = ? WHERE id = ?')
        .run(r.status, r.statusMessage, r.startedAt, r.finishedAt, r.erroredAt, r.id);
      for (const e of events) this.enqueueInTransaction(e);
    });
  }

  async renewRunLeases(owner: string, runIds: number[], until: number): Promise<void> {
    if (!runIds.length) return;
    this.sql(`UPDATE runs SET lease_until = ? WHERE lease_owner = ? AND finished_at IS NULL AND id IN (SELECT value FROM json_each(?))`)
      .run(until, owner, JSON.stringify(runIds));
  }

  async claimAbandonedRuns(now: number | null, lease: RunLease): Promise<Run[]> {
    return (this.sql(`UPDATE runs SET lease_owner = ?, lease_until = ? WHERE finished_at IS NULL AND lease_owner IS NOT ?
      AND (? IS NULL OR lease_until IS NULL OR lease_until < ?) RETURNING *`).all(lease.owner, lease.until, lease.owner, now, now) as Row[])
      .map(runFromRow)
      .sort((a, b) => a.id - b.id);
  }

  async saveRunStep(s: RunStep, owner: string): Promise<boolean> {
    return this.whileHeld(s.runId, owner, () => {
      this.sql(`INSERT INTO run_steps (run_id, idx, name, status, exit_code, logs, started_at, finished_at, artifact, telemetry_notes)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, idx) DO UPDATE SET status = excluded.status,
      exit_code = excluded.exit_code, logs = excluded.logs, started_at = excluded.started_at, finished_at = excluded.finished_at,
      artifact = excluded.artifact, telemetry_notes = excluded.telemetry_notes`)
        .run(s.runId, s.index, s.name, s.status, s.exitCode, s.logs, s.startedAt, s.finishedAt, s.artifact, JSON.stringify(s.telemetryNotes));
    });
  }

  async listRunSteps(runId: number): Promise<RunStep[]> {
    return (this.sql('SELECT * FROM run_steps WHERE run_id = ? ORDER BY idx').all(runId) as Row[]).map(stepFromRow);
  }

  async putArtifact(runId: number, step: number, name: string, bytes: Buffer, now: number, owner: string): Promise<boolean> {
    return this.whileHeld(runId, owner, () => {
      this.sql('INSERT OR REPLACE INTO artifacts (run_id, step, name, bytes, created_at) VALUES (?, ?, ?, ?, ?)').run(runId, step, name, bytes, now);
    });
  }

  async getArtifact(accountId: number, runId: number, name: string): Promise<Buffer | null> {
    const r = this.sql('SELECT a.bytes FROM artifacts a JOIN runs r ON r.id = a.run_id WHERE r.account_id = ? AND a.run_id = ? AND a.name = ?')
      .get(accountId, runId, name) as Row | undefined;
    return r ? (r.bytes as Buffer) : null;
  }

  async enqueueEvent(e: NewEvent): Promise<DeliveryEvent[]> {
    return this.db.transaction(() => this.enqueueInTransaction(e)).immediate();
  }

  private enqueueInTransaction(e: NewEvent): DeliveryEvent[] {
    const subs = (this.sql('SELECT * FROM subscriptions WHERE account_id = ? AND active = 1 AND archived = 0').all(e.accountId) as Row[])
      .map(subscriptionFromRow)
      .filter((s) => subscriptionMatches(s, e.eventType, e.jobId));
    const insert = this.sql(`INSERT INTO events (id, account_id, subscription_id, job_id, event_type, payload, status, attempts,
      next_attempt_at, http_status_code, created_at, test) VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, 0, ?, 0)`);
    return subs.map((s) => {
      const id = e.newEventId();
      const payload = e.payloadFor(s, id);
      insert.run(id, e.accountId, s.id, e.jobId, e.eventType, payload, e.now, e.now);
      return { id, accountId: e.accountId, subscriptionId: s.id, jobId: e.jobId, eventType: e.eventType, payload, status: 'pending' as const,
        attempts: 0, nextAttemptAt: e.now, httpStatusCode: 0, createdAt: e.now, test: false };
    });
  }

  async insertTestEvent(ev: DeliveryEvent): Promise<void> {
    this.sql(`INSERT INTO events (id, account_id, subscription_id, job_id, event_type, payload, status, attempts, next_attempt_at,
      http_status_code, created_at, test) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`)
      .run(ev.id, ev.accountId, ev.subscriptionId, ev.jobId, ev.eventType, ev.payload, ev.status, ev.attempts, ev.nextAttemptAt, ev.httpStatusCode, ev.createdAt);
  }

  async claimDue(now: number, limit: number, leaseUntil: number, owner: string, skip: readonly string[] = []): Promise<ClaimedDelivery[]> {
    return this.db.transaction(() => {
      const rows = this.sql(`SELECT e.*, s.client_url AS s_url, s.hmac_secret AS s_secret, s.active AS s_active, s.archived AS s_archived,
        (SELECT r.id FROM receipts r WHERE r.event_id = e.id AND r.http_status_code = 0 AND r.error_info IS NULL LIMIT 1) AS cut_off_receipt
        FROM events e LEFT JOIN subscriptions s ON s.id = e.subscription_id
        WHERE e.status = 'pending' AND e.test = 0 AND e.next_attempt_at <= ? AND (e.lease_until IS NULL OR e.lease_until <= ?)${skipSql(skip, 'e.')}
        ORDER BY e.next_attempt_at LIMIT ?`).all(now, now, ...skipArgs(skip), limit) as Row[];
      const lease = this.sql('UPDATE events SET lease_until = ?, lease_owner = ? WHERE id = ?');
      const cancel = this.sql(`UPDATE events SET status = 'cancelled', lease_until = NULL WHERE id = ?`);
      const out: ClaimedDelivery[] = [];
      for (const r of rows) {
        // Deliveries of subscriptions made inactive, archived or deleted since the event are dropped, not sent.
        if (r.s_url === null || !r.s_active || r.s_archived) {
          cancel.run(r.id);
          continue;
        }
        lease.run(leaseUntil, owner, r.id);
        out.push({ event: eventFromRow(r), clientUrl: String(r.s_url), hmacSecret: String(r.s_secret), cutOffReceiptId: (r.cut_off_receipt as string | null) ?? null });
      }
      return out;
    }).immediate();
  }

  async nextDueAt(skip: readonly string[] = []): Promise<number | null> {
    // Leased rows are in flight; their lease only matters after a crash, which the poll covers.
    const r = this.sql(`SELECT next_attempt_at AS t FROM events WHERE status = 'pending' AND test = 0 AND lease_until IS NULL${skipSql(skip, '')}
      ORDER BY next_attempt_at LIMIT 1`).get(...skipArgs(skip)) as Row | undefined;
    return r ? Number(r.t) : null;
  }

  async beginAttempts(starts: AttemptStart[]): Promise<string[]> {
    return this.db.transaction(() => {
      const started: string[] = [];
      for (const a of starts) {
        if (a.cutOffReceiptId) {
          this.sql('UPDATE receipts SET error_info = ? WHERE id = ? AND http_status_code = 0 AND error_info IS NULL').run(CUT_OFF_ERROR, a.cutOffReceiptId);
        }
        const n = this.sql('UPDATE events SET attempts = ? WHERE id = ? AND (lease_owner IS NULL OR lease_owner = ?)').run(a.attempt, a.eventId, a.owner).changes;
        if (!n) continue;
        this.sql(`INSERT INTO receipts (id, event_id, subscription_id, attempt, dispatched_at, http_status_code, error_info, request_headers,
          response_body, duration_ms) VALUES (?, ?, ?, ?, ?, 0, NULL, ?, '', 0)`)
          .run(a.receiptId, a.eventId, a.subscriptionId, a.attempt, a.dispatchedAt, JSON.stringify(a.requestHeaders));
        started.push(a.eventId);
      }
      return started;
    }).immediate();
  }

  async recordAttempts(outcomes: AttemptOutcome[], policy: ArchivalPolicy): Promise<void> {
    this.db.transaction(() => {
      // Each subscription is read once and written once per batch, its attempts applied in order.
      const subs = new Map<string, { before: Subscription; after: Subscription } | null>();
      for (const o of outcomes) {
        const test = this.recordOne(o);
        if (test === undefined) continue;
        const id = o.receipt.subscriptionId;
        if (!subs.has(id)) {
          const r = this.sql('SELECT * FROM subscriptions WHERE id = ?').get(id) as Row | undefined;
          subs.set(id, r ? { before: subscriptionFromRow(r), after: subscriptionFromRow(r) } : null);
        }
        const s = subs.get(id);
        if (s) s.after = applyAttempt(s.after, o, policy, test);
      }
      for (const s of subs.values()) {
        if (!s) continue;
        const { before, after } = s;
        this.sql(`UPDATE subscriptions SET http_status_code = ?, dispatched_at = ?, consecutive_failures = ?, failing_since = ?,
          archived = ?, deactivate_reason = ? WHERE id = ?`).run(after.httpStatusCode, after.dispatchedAt, after.consecutiveFailures,
          after.failingSince, after.archived ? 1 : 0, after.deactivateReason, after.id);
        if (after.archived && !before.archived) this.cancelPending(after.id);
      }
    }).immediate();
  }

  /** Receipt and event state of one attempt; returns whether it was a test event, undefined when a later attempt or another process took over. */
  private recordOne(o: AttemptOutcome): boolean | undefined {
    const rc = o.receipt;
    // The row beginAttempts wrote gets its outcome (a deleted subscription's log is gone: nothing to write).
    this.sql(`INSERT INTO receipts (id, event_id, subscription_id, attempt, dispatched_at, http_status_code, error_info,
      request_headers, response_body, duration_ms) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM events WHERE id = ?)
      ON CONFLICT (id) DO UPDATE SET http_status_code = excluded.http_status_code, error_info = excluded.error_info,
      response_body = excluded.response_body, duration_ms = excluded.duration_ms`)
      .run(rc.id, rc.eventId, rc.subscriptionId, rc.attempt, rc.dispatchedAt, rc.httpStatusCode, rc.errorInfo,
        JSON.stringify(rc.requestHeaders), rc.responseBody, rc.durationMs, rc.eventId);
    const status = o.success ? 'succeeded' : o.nextAttemptAt === null ? 'failed' : 'pending';
    // Only the outcome of the event's latest attempt, from the claim's holder, moves the event.
    const ev = this.sql(`UPDATE events SET status = ?, next_attempt_at = ?, http_status_code = ?, lease_until = NULL,
      lease_owner = NULL WHERE id = ? AND attempts = ? AND (lease_owner IS NULL OR lease_owner = ?) AND (status = 'pending' OR ?) RETURNING test`)
      .get(status, o.nextAttemptAt ?? o.now, rc.httpStatusCode, rc.eventId, rc.attempt, o.owner, o.success ? 1 : 0) as Row | undefined;
    return ev ? Boolean(ev.test) : undefined;
  }

  async releaseClaims(owner?: string, eventIds?: readonly string[]): Promise<number> {
    const sql = `UPDATE events SET lease_until = NULL, lease_owner = NULL WHERE status = 'pending' AND lease_until IS NOT NULL`;
    if (eventIds) return this.sql(`${sql} AND lease_owner = ? AND id IN (SELECT value FROM json_each(?))`).run(owner ?? null, JSON.stringify(eventIds)).changes;
    return owner ? this.sql(`${sql} AND lease_owner = ?`).run(owner).changes : this.sql(sql).run().changes;
  }

  async listEvents(accountId: number, subscriptionId: string, offset: number, limit: number): Promise<Page<DeliveryEvent>> {
    const total = Number((this.sql('SELECT count(*) AS n FROM events WHERE account_id = ? AND subscription_id = ?').get(accountId, subscriptionId) as Row).n);
    const rows = this.sql('SELECT * FROM events WHERE account_id = ? AND subscription_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?')
      .all(accountId, subscriptionId, limit, offset) as Row[];
    return { items: rows.map(eventFromRow), total };
  }

  async getEvent(accountId: number, subscriptionId: string, eventId: string): Promise<DeliveryEvent | null> {
    const r = this.sql('SELECT * FROM events WHERE account_id = ? AND subscription_id = ? AND id = ?').get(accountId, subscriptionId, eventId) as Row | undefined;
    return r ? eventFromRow(r) : null;
  }

  async listReceipts(eventId: string): Promise<Receipt[]> {
    return (this.sql('SELECT * FROM receipts WHERE event_id = ? ORDER BY attempt').all(eventId) as Row[]).map(receiptFromRow);
  }

  async failStrandedTests(before: number): Promise<number> {
    return this.sql(`UPDATE events SET status = 'failed' WHERE test = 1 AND status = 'pending' AND created_at < ?`).run(before).changes;
  }

  async prune(before: number): Promise<number> {
    return this.db.transaction(() => {
      // Pending events are kept however old (they still owe a delivery), except test events stranded by a crash.
      const where = `created_at < ? AND (status <> 'pending' OR test = 1)`;
      this.sql(`DELETE FROM receipts WHERE event_id IN (SELECT id FROM events WHERE ${where})`).run(before);
      return this.sql(`DELETE FROM events WHERE ${where}`).run(before).changes;
    }).immediate();
  }
}

function subParams(s: Subscription): Record<string, unknown> {
  return {
    id: s.id, account_id: s.accountId, name: s.name, description: s.description, client_url: s.clientUrl, active: s.active ? 1 : 0,
    archived: s.archived ? 1 : 0, deactivate_reason: s.deactivateReason, event_types: JSON.stringify(s.eventTypes),
    job_ids: JSON.stringify(s.jobIds), hmac_secret: s.hmacSecret, created_at: s.createdAt, updated_at: s.updatedAt,
    dispatched_at: s.dispatchedAt, http_status_code: s.httpStatusCode, consecutive_failures: s.consecutiveFailures,
    failing_since: s.failingSince,
  };
}
