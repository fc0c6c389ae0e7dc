/** Request-body checks for the v3 subscription and v2 job/run endpoints; each failure names its field. */
import { EVENT_TYPES, type EventType } from '../store/types.js';
import { stepRefusal } from '../command-line.js';
import { targetRefusal, type HostResolver } from '../ssrf.js';
import { NUL_REFUSAL } from '../storable-text.js';
import { findLoneSurrogate, loneSurrogateReason, wellFormed } from '../../ingest/lone-surrogate.js';
import { parseId } from '../ids.js';
import { invalid } from './envelope.js';
import { JOB_FIELDS, RUN_FIELDS, SUBSCRIPTION_FIELDS } from './views.js';

export interface SubscriptionInput {
  name?: string;
  description?: string;
  client_url?: string;
  event_types?: EventType[];
  job_ids?: number[];
  active?: boolean;
  /** a secret the client sent back (checked against the stored one: see refuseSecretChange) */
  hmac_secret?: unknown;
}

type Body = Record<string, unknown>;

/**
 * A field a request neither takes nor its resource's responses show is refused, naming it, so that a
 * misspelt field (`job_id` for `job_ids`) is not dropped silently. Response fields are taken and
 * ignored: clients write back the whole object they read, computed fields included.
 */
function refuseUnknownFields(b: Body, taken: readonly string[], shown: ReadonlySet<string>): void {
  for (const field of Object.keys(b)) {
    if (!taken.includes(field) && !shown.has(field)) throw invalid(field, `is not a field of this request (it takes ${taken.join(', ')})`);
  }
}

/** `stored`: the subscription's secret (null on create). Sending back the secret it has is fine; any other is refused. */
export function refuseSecretChange(given: unknown, stored: string | null): void {
  if (given === undefined || given === null || given === stored) return;
  throw invalid('hmac_secret', 'is set by the service when the subscription is created and cannot be changed (leave it out)');
}

const SUBSCRIPTION_REQUEST = ['name', 'description', 'client_url', 'event_types', 'job_ids', 'active'];
const JOB_REQUEST = ['name', 'project_id', 'environment_id', 'execute_steps', 'dbt_version', 'project_name', 'environment_name'];
const RUN_REQUEST = ['cause'];

function asBody(body: unknown): Body {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('body', 'must be a JSON object');
  return body as Body;
}

/**
 * A text field: no store can hold a NUL character, so none is taken (see storable-text.ts); nor half
 * of a UTF-16 pair (`"\ud800"`), which the stores keep as U+FFFD: what a GET returns would differ.
 */
function text(field: string, v: string): string {
  if (v.includes('\0')) throw invalid(field, NUL_REFUSAL);
  if (!wellFormed(v)) throw invalid(field, `must not contain ${loneSurrogateReason(findLoneSurrogate(v, JSON.stringify(v))!.escape)}`);
  return v;
}

function nonEmptyString(b: Body, field: string): string | undefined {
  const v = b[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.trim() === '') throw invalid(field, 'must be a non-empty string');
  return text(field, v);
}

export function checkUrl(v: string, field = 'client_url'): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw invalid(field, `is not a valid URL: ${JSON.stringify(v)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw invalid(field, 'must be an http or https URL');
  if (u.username || u.password) throw invalid(field, 'must not carry a user name or password');
  return v;
}

/**
 * A client_url must not point at a private, loopback or link-local address (unless serve allows them):
 * refused when saved, so the user learns at once; every connection is checked again when it opens.
 */
export async function checkTargetAllowed(url: string, allowPrivateTargets: boolean, resolve: HostResolver): Promise<void> {
  if (allowPrivateTargets) return;
  const why = await targetRefusal(url, resolve);
  if (why) {
    throw invalid('client_url', `${why}; deliveries to private, loopback and link-local addresses are refused (serve --allow-private-targets allows them)`);
  }
}

/** An id in a body: a positive integer, or its digits (as responses show ids); past MAX_SAFE_INTEGER neither. */
const idValue = (v: unknown): number | null =>
  typeof v === 'number' ? (Number.isSafeInteger(v) && v > 0 ? v : null) : typeof v === 'string' ? parseId(v) : null;

/** Job ids are integers; digit strings (as responses show them) are accepted too. */
export function checkJobIds(v: unknown, field = 'job_ids'): number[] {
  if (!Array.isArray(v)) throw invalid(field, 'must be an array of integer job ids');
  return [...new Set(v.map((x, i) => {
    const id = idValue(x);
    if (id === null) throw invalid(`${field}[${i}]`, `must be a positive integer job id up to ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(x)}`);
    return id;
  }))];
}

/** `partial`: an update may leave out fields (they keep their values); a create needs name, client_url, event_types. */
export function parseSubscriptionBody(body: unknown, partial: boolean): SubscriptionInput {
  const b = asBody(body);
  refuseUnknownFields(b, SUBSCRIPTION_REQUEST, SUBSCRIPTION_FIELDS);
  const out: SubscriptionInput = { hmac_secret: b.hmac_secret };
  out.name = nonEmptyString(b, 'name');
  if (b.description !== undefined && b.description !== null) {
    if (typeof b.description !== 'string') throw invalid('description', 'must be a string');
    out.description = text('description', b.description);
  }
  const url = nonEmptyString(b, 'client_url');
  if (url !== undefined) out.client_url = checkUrl(url.trim());
  if (b.event_types !== undefined) {
    if (!Array.isArray(b.event_types) || b.event_types.length === 0) throw invalid('event_types', `must list at least one of ${EVENT_TYPES.join(', ')}`);
    out.event_types = [...new Set(b.event_types.map((t, i) => {
      if (!EVENT_TYPES.includes(t as EventType)) throw invalid(`event_types[${i}]`, `unknown event type ${JSON.stringify(t)}; use ${EVENT_TYPES.join(', ')}`);
      return t as EventType;
    }))];
  }
  if (b.job_ids !== undefined && b.job_ids !== null) out.job_ids = checkJobIds(b.job_ids);
  if (b.active !== undefined) {
    if (typeof b.active !== 'boolean') throw invalid('active', 'must be true or false');
    out.active = b.active;
  }
  if (!partial) {
    if (out.name === undefined) throw invalid('name', 'is required');
    if (out.client_url === undefined) throw invalid('client_url', 'is required');
    if (out.event_types === undefined) throw invalid('event_types', `is required: at least one of ${EVENT_TYPES.join(', ')}`);
  }
  return out;
}

export function parsePaging(q: Record<string, unknown>, defaultLimit = 10): { offset: number; limit: number } {
  const int = (field: string, dflt: number, min: number, max: number): number => {
    const v = q[field];
    if (v === undefined || v === '') return dflt;
    if (typeof v !== 'string' || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw invalid(field, `must be an integer from ${min} to ${max}`);
    return Number(v);
  };
  return { offset: int('offset', 0, 0, Number.MAX_SAFE_INTEGER), limit: int('limit', defaultLimit, 1, 100) };
}

export interface JobInput {
  name: string;
  project_id: number;
  environment_id: number;
  execute_steps: string[];
  dbt_version: string;
  project_name?: string;
  environment_name?: string;
}

const intField = (b: Body, field: string): number => {
  const v = b[field];
  const id = idValue(v);
  if (id !== null) return id;
  throw invalid(field, v === undefined ? 'is required (a positive integer)' : `must be a positive integer up to ${Number.MAX_SAFE_INTEGER}`);
};

export function parseJobBody(body: unknown, allowedCommands: readonly string[]): JobInput {
  const b = asBody(body);
  refuseUnknownFields(b, JOB_REQUEST, JOB_FIELDS);
  const name = nonEmptyString(b, 'name');
  if (name === undefined) throw invalid('name', 'is required');
  const steps = b.execute_steps;
  if (!Array.isArray(steps) || steps.length === 0) throw invalid('execute_steps', 'must be a non-empty array of commands');
  steps.forEach((s, i) => {
    if (typeof s !== 'string' || !s.trim()) throw invalid(`execute_steps[${i}]`, 'must be a non-empty command string');
    const refusal = stepRefusal(s, allowedCommands);
    if (refusal) throw invalid(`execute_steps[${i}]`, refusal);
  });
  // Left out, null or blank: the default. Any other type is refused, so a typo is not silently dropped.
  const opt = (f: string): string | undefined => {
    const v = b[f];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw invalid(f, `must be a string, not ${Array.isArray(v) ? 'an array' : `a ${typeof v}`}`);
    return v.trim() ? text(f, v) : undefined;
  };
  return {
    name, project_id: intField(b, 'project_id'), environment_id: intField(b, 'environment_id'), execute_steps: steps as string[],
    dbt_version: opt('dbt_version') ?? '', project_name: opt('project_name'), environment_name: opt('environment_name'),
  };
}

export function parseRunBody(body: unknown): { cause: string } {
  const b = body === undefined || body === null ? {} : asBody(body);
  refuseUnknownFields(b, RUN_REQUEST, RUN_FIELDS);
  const cause = nonEmptyString(b, 'cause');
  if (cause === undefined) throw invalid('cause', 'is required: a short text saying why the run was started');
  return { cause };
}
