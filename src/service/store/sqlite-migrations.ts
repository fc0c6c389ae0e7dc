/** SQLite schema, applied in order on open; `user_version` records how far a database has come. */
export const SQLITE_MIGRATIONS: string[] = [
  `
  CREATE TABLE accounts (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, identifier TEXT NOT NULL, created_at INTEGER NOT NULL);
  CREATE TABLE tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER NOT NULL REFERENCES accounts(id),
    permission_set TEXT NOT NULL, name TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL);
  CREATE TABLE subscriptions (
    id TEXT PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id), name TEXT NOT NULL,
    description TEXT NOT NULL, client_url TEXT NOT NULL, active INTEGER NOT NULL, archived INTEGER NOT NULL DEFAULT 0,
    deactivate_reason TEXT, event_types TEXT NOT NULL, job_ids TEXT NOT NULL, hmac_secret TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, dispatched_at INTEGER, http_status_code INTEGER NOT NULL DEFAULT 0,
    consecutive_failures INTEGER NOT NULL DEFAULT 0, failing_since INTEGER);
  CREATE INDEX subscriptions_account ON subscriptions(account_id, created_at);
  CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER NOT NULL REFERENCES accounts(id), name TEXT NOT NULL,
    project_id INTEGER NOT NULL, environment_id INTEGER NOT NULL, project_name TEXT NOT NULL, environment_name TEXT NOT NULL,
    tool_version TEXT NOT NULL, execute_steps TEXT NOT NULL, created_at INTEGER NOT NULL);
  CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER NOT NULL, job_id INTEGER NOT NULL REFERENCES jobs(id),
    status INTEGER NOT NULL, status_message TEXT, cause TEXT NOT NULL, created_at INTEGER NOT NULL,
    started_at INTEGER, finished_at INTEGER, errored_at INTEGER);
  CREATE TABLE run_steps (
    run_id INTEGER NOT NULL REFERENCES runs(id), idx INTEGER NOT NULL, name TEXT NOT NULL, status INTEGER NOT NULL,
    exit_code INTEGER, logs TEXT NOT NULL, started_at INTEGER, finished_at INTEGER, artifact TEXT, PRIMARY KEY (run_id, idx));
  CREATE TABLE artifacts (
    run_id INTEGER NOT NULL REFERENCES runs(id), step INTEGER NOT NULL, name TEXT NOT NULL, bytes BLOB NOT NULL,
    created_at INTEGER NOT NULL, PRIMARY KEY (run_id, name));
  CREATE TABLE events (
    id TEXT PRIMARY KEY, account_id INTEGER NOT NULL, subscription_id TEXT NOT NULL, job_id INTEGER, event_type TEXT NOT NULL,
    payload TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL,
    lease_until INTEGER, lease_owner TEXT, http_status_code INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
    test INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX events_due ON events(next_attempt_at) WHERE status = 'pending';
  CREATE INDEX events_subscription ON events(subscription_id, created_at);
  CREATE INDEX events_created ON events(created_at);
  CREATE TABLE receipts (
    id TEXT PRIMARY KEY, event_id TEXT NOT NULL, subscription_id TEXT NOT NULL, attempt INTEGER NOT NULL,
    dispatched_at INTEGER NOT NULL, http_status_code INTEGER NOT NULL, error_info TEXT, request_headers TEXT NOT NULL,
    response_body TEXT NOT NULL, duration_ms REAL NOT NULL);
  CREATE INDEX receipts_event ON receipts(event_id, attempt);
  `,
  // Deleted jobs are kept (their runs stay readable) and marked; listing runs of one job needs the index.
  `
  ALTER TABLE jobs ADD COLUMN deleted_at INTEGER;
  CREATE INDEX runs_job ON runs(account_id, job_id, id);
  `,
  // Runs are held by the process running them (a lease it renews), so another process sharing the
  // store can close the runs of one that died.
  `
  ALTER TABLE runs ADD COLUMN lease_owner TEXT;
  ALTER TABLE runs ADD COLUMN lease_until INTEGER;
  CREATE INDEX runs_unfinished ON runs(lease_until) WHERE finished_at IS NULL;
  `,
  // The runner's record of a step's telemetry not stored (JSON), apart from the step's log, which a step can print anything into.
  `
  ALTER TABLE run_steps ADD COLUMN telemetry_notes TEXT NOT NULL DEFAULT '[]';
  `,
];
