/** v2: jobs (create, list, get, delete), runs (trigger, list, get with run_steps) and run artifacts, with the hosted API's paths and field names. */
import type { FastifyInstance } from 'fastify';
import { toMicros } from '../clock.js';
import { parseId } from '../ids.js';
import type { Job } from '../store/types.js';
import type { ServiceContext } from './context.js';
import { tokenOf, JOB_WRITERS, requirePermission, RUN_TRIGGERS } from './auth.js';
import { echoed, invalid, notFound, v2, v2List } from './envelope.js';
import { parseJobBody, parsePaging, parseRunBody } from './validate.js';
import { jobView, runView } from './views.js';

type P = { account_id: string; job_id: string; run_id: string; '*': string };

const idParam = (v: string, field: string): number => {
  const id = parseId(v);
  if (id === null) throw notFound(field);
  return id;
};

export function runRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const base = '/api/v2/accounts/:account_id';
  const { store, clock } = ctx;

  app.post<{ Params: P }>(`${base}/jobs/`, async (req, reply) => {
    const t = tokenOf(req);
    requirePermission(t, JOB_WRITERS, 'creating a job');
    const b = parseJobBody(req.body, ctx.stepCommands);
    const job = await store.createJob({
      accountId: t.accountId, name: b.name, projectId: b.project_id, environmentId: b.environment_id,
      projectName: b.project_name ?? `Project ${b.project_id}`, environmentName: b.environment_name ?? `Environment ${b.environment_id}`,
      toolVersion: b.dbt_version, executeSteps: b.execute_steps, createdAt: toMicros(clock.now()),
    });
    reply.code(201);
    return v2(jobView(job), 201);
  });

  /** A job that can be read and run: deleted jobs answer 404 here (their runs stay readable). */
  const liveJob = async (accountId: number, param: string): Promise<Job> => {
    const job = await store.getJob(accountId, idParam(param, 'job'));
    if (!job || job.deletedAt) throw notFound('job');
    return job;
  };

  app.get<{ Params: P; Querystring: Record<string, unknown> }>(`${base}/jobs/`, async (req) => {
    const t = tokenOf(req);
    const { offset, limit } = parsePaging(req.query, 100);
    const page = await store.listJobs(t.accountId, offset, limit);
    return v2List(page.items.map(jobView), page.total, { offset, limit }, 'id');
  });

  app.get<{ Params: P }>(`${base}/jobs/:job_id/`, async (req) => {
    const t = tokenOf(req);
    return v2(jobView(await liveJob(t.accountId, req.params.job_id)));
  });

  app.delete<{ Params: P }>(`${base}/jobs/:job_id/`, async (req) => {
    const t = tokenOf(req);
    requirePermission(t, JOB_WRITERS, 'deleting a job');
    const job = await store.deleteJob(t.accountId, idParam(req.params.job_id, 'job'), toMicros(clock.now()));
    if (!job) throw notFound('job');
    return v2(jobView(job));
  });

  app.post<{ Params: P }>(`${base}/jobs/:job_id/run/`, async (req) => {
    const t = tokenOf(req);
    requirePermission(t, RUN_TRIGGERS, 'triggering a run');
    const job = await liveJob(t.accountId, req.params.job_id);
    const { cause } = parseRunBody(req.body);
    const run = await ctx.runner.trigger(job, cause);
    return v2(runView(run, job, toMicros(clock.now())));
  });

  app.get<{ Params: P; Querystring: Record<string, unknown> }>(`${base}/runs/`, async (req) => {
    const t = tokenOf(req);
    const { offset, limit } = parsePaging(req.query, 100);
    const jobParam = req.query.job_definition_id;
    let jobId: number | undefined;
    if (jobParam !== undefined && jobParam !== '') {
      const id = typeof jobParam === 'string' ? parseId(jobParam) : null;
      if (id === null) throw invalid('job_definition_id', `must be a job id (a positive integer up to ${Number.MAX_SAFE_INTEGER})`);
      jobId = id;
    }
    const orderBy = req.query.order_by ?? 'id';
    if (orderBy !== 'id' && orderBy !== '-id') throw invalid('order_by', 'must be id (oldest first) or -id (newest first)');
    const page = await store.listRuns(t.accountId, { jobId, offset, limit, newestFirst: orderBy === '-id' });
    const jobs = new Map<number, Job | null>();
    const views = [];
    for (const run of page.items) {
      if (!jobs.has(run.jobId)) jobs.set(run.jobId, await store.getJob(t.accountId, run.jobId));
      const job = jobs.get(run.jobId);
      if (job) views.push(runView(run, job, toMicros(clock.now())));
    }
    return v2List(views, page.total, { offset, limit, ...(jobId === undefined ? {} : { job_definition_id: jobId }) }, orderBy);
  });

  app.get<{ Params: P; Querystring: { include_related?: string } }>(`${base}/runs/:run_id/`, async (req) => {
    const t = tokenOf(req);
    const run = await store.getRun(t.accountId, idParam(req.params.run_id, 'run'));
    if (!run) throw notFound('run');
    const job = await store.getJob(t.accountId, run.jobId);
    if (!job) throw notFound('job');
    const related = String(req.query.include_related ?? '');
    const steps = related.includes('run_steps') ? await store.listRunSteps(run.id) : undefined;
    return v2(runView(run, job, toMicros(clock.now()), steps));
  });

  app.get<{ Params: P; Querystring: { step?: string } }>(`${base}/runs/:run_id/artifacts/*`, async (req, reply) => {
    const t = tokenOf(req);
    const runId = idParam(req.params.run_id, 'run');
    const path = req.params['*'];
    const m = /^(?:metadata\/)?(telemetry-(\d+)-otel\.parquet)$/.exec(path);
    if (!m) throw notFound(`artifact ${echoed(path)}`);
    if (req.query.step !== undefined && req.query.step !== m[2]) throw invalid('step', `must match the step number in the artifact name (${m[2]})`);
    const bytes = await store.getArtifact(t.accountId, runId, m[1]!);
    if (!bytes) throw notFound(`artifact ${m[1]} of run ${runId}`);
    reply.header('content-type', 'application/octet-stream').header('content-disposition', `attachment; filename="${m[1]}"`);
    return reply.send(bytes);
  });
}
