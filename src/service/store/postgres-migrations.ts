/** PostgreSQL schema (same tables and columns as SQLite, so row mapping is shared), applied in order. */
export const POSTGRES_MIGRATIONS: string[] = [
  `
  CREATE TABLE accounts (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL, identifier TEXT NOT NULL, created_at BIGINT NOT NULL);
  CREATE TABLE tokens (
    id BIGSERIAL PRIMARY KEY, account_id BIGINT NOT NULL REFERENCES accounts(id), permission_set TEXT NOT NULL, name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE, created_at BIGINT NOT NULL);
  CREATE TABLE subscriptions (
    id TEXT PRIMARY KEY, account_id BIGINT NOT NULL REFERENCES accounts(id), name TEXT NOT NULL, description TEXT NOT NULL,
    client_url TEXT NOT NULL, active BOOLEAN NOT NULL, archived BOOLEAN NOT NULL DEFAULT false, deactivate_reason TEXT,
    event_types TEXT NOT NULL, job_ids TEXT NOT NULL, hmac_secret TEXT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
    dispatched_at BIGINT, http_status_code INTEGER NOT NULL DEFAULT 0, consecutive_failures INTEGER NOT NULL DEFAULT 0, failing_since BIGINT);
  CREATE INDEX subscriptions_account ON subscriptions(account_id, created_at);
  CREATE TABLE jobs (
    id BIGSERIAL PRIMARY KEY, account_id BIGINT NOT NULL REFERENCES accounts(id), name TEXT NOT NULL, project_id BIGINT NOT NULL,
    environment_id BIGINT NOT NULL, project_name TEXT NOT NULL, environment_name TEXT NOT NULL, tool_version TEXT NOT NULL,
    execute_steps TEXT NOT NULL, created_at BIGINT NOT NULL);
  CREATE TABLE runs (
    id BIGSERIAL PRIMARY KEY, account_id BIGINT NOT NULL, job_id BIGINT NOT NULL REFERENCES jobs(id), status INTEGER NOT NULL,
    status_message TEXT, cause TEXT NOT NULL, created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT, errored_at BIGINT);
  CREATE TABLE run_steps (
    run_id BIGINT NOT NULL REFERENCES runs(id), idx INTEGER NOT NULL, name TEXT NOT NULL, status INTEGER NOT NULL, exit_code INTEGER,
    logs TEXT NOT NULL, started_at BIGINT, finished_at BIGINT, artifact TEXT, PRIMARY KEY (run_id, idx));
  CREATE TABLE artifacts (
    run_id BIGINT NOT NULL REFERENCES runs(id), step INTEGER NOT NULL, name TEXT NOT NULL, bytes BYTEA NOT NULL, created_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, name));
  CREATE TABLE events (
    id TEXT PRIMARY KEY, account_id BIGINT NOT NULL, subscription_id TEXT NOT NULL, job_id BIGINT, event_type TEXT NOT NULL,
    payload TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at BIGINT NOT NULL,
    lease_until BIGINT, lease_owner TEXT, http_status_code INTEGER NOT NULL DEFAULT 0, created_at BIGINT NOT NULL,
    test BOOLEAN NOT NULL DEFAULT false);
  CREATE INDEX events_due ON events(next_attempt_at) WHERE status = 'pending';
  CREATE INDEX events_subscription ON events(subscription_id, created_at);
  CREATE INDEX events_created ON events(created_at);
  CREATE TABLE receipts (
    id TEXT PRIMARY KEY, event_id TEXT NOT NULL, subscription_id TEXT NOT NULL, attempt INTEGER NOT NULL, dispatched_at BIGINT NOT NULL,
    http_status_code INTEGER NOT NULL, error_info TEXT, request_headers TEXT NOT NULL, response_body TEXT NOT NULL,
    duration_ms DOUBLE PRECISION NOT NULL);
  CREATE INDEX receipts_event ON receipts(event_id, attempt);
  `,
  // Insertion order, for listings of rows created in the same millisecond: ids are random within a
  // second (KSUIDs), so ordering by id put such rows in any order. SQLite orders by its rowid.
  `
  ALTER TABLE subscriptions ADD COLUMN seq BIGSERIAL;
  ALTER TABLE events ADD COLUMN seq BIGSERIAL;
  `,
  // Deleted jobs are kept (their runs stay readable) and marked; listing runs of one job needs the index.
  `
  ALTER TABLE jobs ADD COLUMN deleted_at BIGINT;
  CREATE INDEX runs_job ON runs(account_id, job_id, id);
  `,
  // Runs are held by the process running them (a lease it renews), so another process can close the
  // runs of one that died.
  `
  ALTER TABLE runs ADD COLUMN lease_owner TEXT;
  ALTER TABLE runs ADD COLUMN lease_until BIGINT;
  CREATE INDEX runs_unfinished ON runs(lease_until) WHERE finished_at IS NULL;
  `,
  // The runner's record of a step's telemetry not stored (JSON), apart from the step's log, which a step can print anything into.
  `
  ALTER TABLE run_steps ADD COLUMN telemetry_notes TEXT NOT NULL DEFAULT '[]';
  `,
];
