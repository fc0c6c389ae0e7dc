/**
 * Client of the v2 run API: run details with steps, and the per-step telemetry artifact
 * `telemetry-<n>-otel.parquet`. Without a step number it finds the steps that have telemetry.
 */
import { answerSummary, ApiClient, ApiClientError, NoAnswer, type ClientConfig } from './http.js';
import { JobsClient, runFinished, type RunInfo } from './jobs.js';

export const telemetryArtifactName = (step: number): string => `telemetry-${step}-otel.parquet`;

/** A Parquet file begins and ends with the magic bytes PAR1. */
const PARQUET_MAGIC = Buffer.from('PAR1');
const isParquet = (b: Buffer): boolean =>
  b.length >= 2 * PARQUET_MAGIC.length && b.subarray(0, 4).equals(PARQUET_MAGIC) && b.subarray(-4).equals(PARQUET_MAGIC);

/** The file name an answer gives its body (Content-Disposition: attachment; filename="..."). */
const attachmentName = (res: Response): string | undefined =>
  /^attachment;\s*filename="([^"]*)"/i.exec(res.headers.get('content-disposition') ?? '')?.[1];

export class ArtifactsClient {
  private readonly http: ApiClient;
  private readonly jobs: JobsClient;
  constructor(config: ClientConfig) {
    this.http = new ApiClient(config);
    this.jobs = new JobsClient(config);
  }

  private get path(): string {
    return `/api/v2/accounts/${encodeURIComponent(String(this.http.config.accountId))}`;
  }

  async run(runId: number | string): Promise<RunInfo> {
    return this.jobs.run(runId);
  }

  /**
   * One step's telemetry. When there is none (404) and the run has not finished, `RunNotFinished`:
   * this service stores telemetry when the run ends.
   */
  async fetchStepTelemetry(runId: number | string, step: number): Promise<Buffer> {
    try {
      return await this.fetchTelemetry(runId, step);
    } catch (e) {
      if (e instanceof ApiClientError && e.status === 404) {
        const run = await this.run(runId);
        if (!runFinished(run)) throw new RunNotFinished(run, step);
      }
      throw e;
    }
  }

  async fetchTelemetry(runId: number | string, step: number): Promise<Buffer> {
    const name = telemetryArtifactName(step);
    const path = `${this.path}/runs/${runId}/artifacts/metadata/${name}?step=${step}`;
    const res = await this.http.raw('GET', path);
    let bytes: Buffer;
    try {
      bytes = Buffer.from(await res.arrayBuffer());
    } catch (e) {
      if (e instanceof NoAnswer) throw e;
      throw new ApiClientError(0, `${name} of run ${runId}: the download was cut short (${(e as Error).message})`);
    }
    // Any 200 is not the artifact: a web page answers every path at a wrong --base-url. An answer
    // that names the artifact as its attachment is the service's, sent as it was stored.
    if (!isParquet(bytes)) {
      if (attachmentName(res) === name) throw new ApiClientError(res.status, `${name} of run ${runId} as the service sent it is not a Parquet file (${answerSummary(res, bytes)})`);
      throw new ApiClientError(res.status, `GET ${this.http.base}${path}: not a Parquet file (${answerSummary(res, bytes)}); is --base-url the service's address?`);
    }
    return bytes;
  }

  /**
   * Steps whose telemetry can be downloaded. This service marks them (telemetry_artifact); the hosted
   * API does not, so there every step is tried and the ones answering 404 are skipped.
   */
  async telemetrySteps(runId: number | string): Promise<{ run: RunInfo; steps: number[]; marked: boolean }> {
    const run = await this.run(runId);
    const steps = run.run_steps ?? [];
    const marked = steps.some((s) => 'telemetry_artifact' in s);
    return { run, steps: steps.filter((s) => !marked || s.telemetry_artifact).map((s) => s.index), marked };
  }

  /**
   * Downloads the telemetry of every step that has it (skipping 404s where steps are not marked).
   * `notStored`: the steps whose telemetry this service could not store, with why (the service's record, not their logs' text).
   * A run that has not finished is `RunNotFinished`: what it has so far is not its telemetry.
   */
  async fetchAllTelemetry(runId: number | string): Promise<{ artifacts: { step: number; bytes: Buffer }[]; notStored: { step: number; reason: string }[] }> {
    const { run, steps, marked } = await this.telemetrySteps(runId);
    if (!runFinished(run)) throw new RunNotFinished(run);
    const artifacts: { step: number; bytes: Buffer }[] = [];
    for (const step of steps) {
      try {
        artifacts.push({ step, bytes: await this.fetchTelemetry(runId, step) });
      } catch (e) {
        if (!marked && e instanceof ApiClientError && e.status === 404) continue;
        throw e;
      }
    }
    const notStored = (run.run_steps ?? []).flatMap((s) => (s.telemetry_not_stored?.length ? [{ step: s.index, reason: s.telemetry_not_stored.join('; ') }] : []));
    return { artifacts, notStored };
  }
}

/** The run has not finished, so its telemetry is not stored yet (`step`: the step asked for). */
export class RunNotFinished extends Error {
  constructor(readonly run: RunInfo, readonly step?: number) {
    super(`run ${run.id} is still ${run.status_humanized ?? run.status}`);
  }
}
