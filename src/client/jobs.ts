/**
 * Client of the v2 jobs and runs API: create, list, read and delete jobs; trigger a run, list a job's
 * runs, read one run with its steps and follow it until it has finished. Objects are returned as
 * the API answered them.
 */
import { ApiClient, ApiClientError, NoAnswer, type ApiObject, type ClientConfig } from './http.js';

export interface JobInput {
  name: string;
  execute_steps: string[];
  project_id: number;
  environment_id: number;
  dbt_version?: string;
  project_name?: string;
  environment_name?: string;
}

export interface Job extends ApiObject {
  id: number;
  name: string;
  execute_steps: string[];
}

export interface RunStepInfo extends ApiObject {
  index: number;
  name: string;
  status: number;
  status_humanized?: string;
  logs?: string;
  /** this service only: the artifact this step's telemetry is stored as (null: none) */
  telemetry_artifact?: string | null;
  /** this service only: why each telemetry file the step wrote was not stored ("FILE: why") */
  telemetry_not_stored?: string[];
}

/** Run status codes of the v2 API. */
export const RUN_SUCCESS = 10;

export interface RunInfo extends ApiObject {
  id: number;
  job_id?: number;
  status: number;
  status_humanized?: string;
  status_message?: string | null;
  is_complete?: boolean;
  finished_at?: string | null;
  run_steps?: RunStepInfo[];
}

/** Finished: a final status, and its steps' telemetry stored (an errored run gets its finished_at only after that). */
export const runFinished = (r: RunInfo): boolean => r.status >= RUN_SUCCESS && (r.finished_at !== undefined ? r.finished_at !== null : r.is_complete !== false);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An error of a read that may pass: no answer, too many requests, or the service's own failure. */
const passing = (e: ApiClientError): boolean => e.status === 0 || e.status === 429 || e.status >= 500;

/** How long `waitFor` keeps trying reads that fail in a row. */
const WAIT_RETRY_MS = 60_000;

export class JobsClient {
  private readonly http: ApiClient;
  constructor(config: ClientConfig) {
    this.http = new ApiClient(config);
  }

  private get path(): string {
    return `/api/v2/accounts/${encodeURIComponent(String(this.http.config.accountId))}`;
  }

  async create(job: JobInput): Promise<Job> {
    return this.http.data<Job>('POST', `${this.path}/jobs/`, job);
  }

  async list(offset = 0, limit = 100): Promise<{ items: Job[]; total: number }> {
    return this.http.page<Job>(`${this.path}/jobs/?offset=${offset}&limit=${limit}`);
  }

  /** Every job from item `offset` on. */
  async listAll(offset = 0): Promise<Job[]> {
    return this.http.all<Job>(`${this.path}/jobs/`, offset);
  }

  async get(id: number | string): Promise<Job> {
    return this.http.data<Job>('GET', `${this.path}/jobs/${id}/`);
  }

  async delete(id: number | string): Promise<Job> {
    return this.http.data<Job>('DELETE', `${this.path}/jobs/${id}/`);
  }

  async trigger(id: number | string, cause: string): Promise<RunInfo> {
    return this.http.data<RunInfo>('POST', `${this.path}/jobs/${id}/run/`, { cause });
  }

  /** Runs of one job, newest first. */
  async runs(jobId: number | string, offset = 0, limit = 20): Promise<{ items: RunInfo[]; total: number }> {
    return this.http.page<RunInfo>(`${this.path}/runs/?job_definition_id=${jobId}&order_by=-id&offset=${offset}&limit=${limit}`);
  }

  /** One run with its steps (`deadline`, epoch ms: the read ends by then, a NoAnswer when it had no answer). */
  async run(runId: number | string, deadline = Infinity): Promise<RunInfo> {
    return this.http.until(deadline).data<RunInfo>('GET', `${this.path}/runs/${runId}/?include_related=${encodeURIComponent('["run_steps"]')}`);
  }

  /**
   * Reads the run every `intervalMs` until it has finished; `onChange` hears each new status. Throws
   * `WaitTimeout` after `timeoutMs` (none: waits as long as it takes); no read goes on past that.
   * A read the service did not answer, or answered 429 or 5xx (a restart, its database away), is
   * tried again (`onRetry` hears it) until such reads have failed for `retryForMs` in a row; any
   * other error ends the wait.
   */
  async waitFor(
    runId: number | string,
    o: { intervalMs: number; timeoutMs?: number; retryForMs?: number; onChange?: (r: RunInfo) => void; onRetry?: (e: ApiClientError) => void },
  ): Promise<RunInfo> {
    const deadline = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs;
    let last: RunInfo | undefined;
    let failingSince: number | undefined;
    for (;;) {
      let r: RunInfo;
      try {
        r = await this.run(runId, deadline);
        failingSince = undefined;
      } catch (e) {
        if (!(e instanceof ApiClientError) || !passing(e)) throw e;
        if (e instanceof NoAnswer && Date.now() >= deadline) throw new WaitTimeout(last, e);
        failingSince ??= Date.now();
        if (Date.now() - failingSince >= (o.retryForMs ?? WAIT_RETRY_MS) || Date.now() >= deadline) throw e;
        o.onRetry?.(e);
        await sleep(Math.min(o.intervalMs, Math.max(0, deadline - Date.now())));
        continue;
      }
      if (r.status !== last?.status) o.onChange?.(r);
      last = r;
      if (runFinished(r)) return r;
      if (Date.now() >= deadline) throw new WaitTimeout(r);
      await sleep(Math.min(o.intervalMs, Math.max(0, deadline - Date.now())));
    }
  }
}

/** The wait ran out: the run had not finished (`run`, as last read), or its last read was not answered (`noAnswer`). */
export class WaitTimeout extends Error {
  constructor(readonly run: RunInfo | undefined, readonly noAnswer?: NoAnswer) {
    super(noAnswer ? noAnswer.message : `run ${run?.id} has not finished (${run?.status_humanized ?? run?.status})`);
  }
}
