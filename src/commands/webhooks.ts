import type { Argv, CommandModule } from 'yargs';
import Table from 'cli-table3';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { WebhooksClient, type SubscriptionChanges, type WebhookSubscription } from '../client/webhooks.js';
import { clientConfig, connectionOptions, withApiErrors, type ConnectionArgs } from '../client/cli-config.js';
import { verifyStandardWebhook, verifyWebhookSignature } from '../client/verify.js';
import { FoundError, UsageError } from '../errors.js';

type Fmt = { format: 'table' | 'json' };
type Conn = ConnectionArgs & Fmt;

const out = (s: string): void => {
  process.stdout.write(s.endsWith('\n') ? s : s + '\n');
};

function render(subs: WebhookSubscription[], format: Fmt['format']): void {
  if (format === 'json') {
    out(JSON.stringify(subs, null, 2));
    return;
  }
  const t = new Table({ head: ['id', 'name', 'status', 'events', 'jobs', 'url', 'last http'] });
  for (const s of subs) {
    t.push([s.id, s.name, s.archived ? 'archived' : s.active ? 'active' : 'inactive', s.event_types.join('\n'),
      s.job_ids.length ? s.job_ids.join(',') : 'all', s.client_url, s.http_status_code]);
  }
  out(t.toString());
}

const list = (s: string | undefined) => (s === undefined ? undefined : s.split(',').map((x) => x.trim()).filter(Boolean));
function jobIds(s: string | undefined): number[] | undefined {
  const l = list(s);
  if (!l) return undefined;
  return l.map((x) => {
    if (!/^\d+$/.test(x)) throw new UsageError(`--job-ids: "${x}" is not an integer job id`);
    return Number(x);
  });
}

function changeOptions<T>(y: Argv<T>) {
  return y
    .option('name', { type: 'string' })
    .option('url', { type: 'string', describe: 'client_url: the endpoint that receives events' })
    .option('event-types', { type: 'string', describe: 'comma-separated: job.run.started,job.run.completed,job.run.errored' })
    .option('job-ids', { type: 'string', describe: 'comma-separated job ids; empty = all jobs' })
    .option('description', { type: 'string' })
    .option('active', { type: 'boolean', describe: '--active / --no-active' });
}

type ChangeArgs = { name?: string; url?: string; 'event-types'?: string; 'job-ids'?: string; description?: string; active?: boolean };
const changes = (a: ChangeArgs): SubscriptionChanges => ({
  name: a.name, client_url: a.url, event_types: list(a['event-types']), job_ids: jobIds(a['job-ids']), description: a.description, active: a.active,
});

const client = (a: ConnectionArgs) => new WebhooksClient(clientConfig(a));
const withConn = <T>(y: Argv<T>) => connectionOptions(y).option('format', { choices: ['table', 'json'] as const, default: 'table' as const });

export const webhooksCommand: CommandModule<object, object> = {
  command: 'webhooks <command>',
  describe: 'manage webhook subscriptions (v3 API), verify signatures, receive events locally',
  builder: (y) =>
    y
      .command<Conn & { limit?: number; offset?: number }>('list', 'list subscriptions (every page unless --limit)', (yy) =>
        withConn(yy).option('limit', { type: 'number' }).option('offset', { type: 'number', default: 0 }),
        async (a) => withApiErrors(async () => {
          const c = client(a);
          render(a.limit ? (await c.list(a.offset ?? 0, a.limit)).items : await c.listAll(), a.format);
        }))
      .command<Conn & { id: string }>('get <id>', 'show one subscription', (yy) => withConn(yy).positional('id', { type: 'string', demandOption: true }),
        async (a) => withApiErrors(async () => render([await client(a).get(a.id)], a.format)))
      .command<Conn & ChangeArgs>('create', 'create a subscription; prints its hmac_secret (shown only now)', (yy) =>
        changeOptions(withConn(yy)).demandOption(['name', 'url', 'event-types']),
        async (a) => withApiErrors(async () => {
          const c = changes(a);
          const s = await client(a).create({ ...c, name: c.name!, client_url: c.client_url!, event_types: c.event_types! });
          if (a.format === 'json') return out(JSON.stringify(s, null, 2));
          render([s], 'table');
          out(`hmac_secret\t${s.hmac_secret}\n(keep it: it is shown only once; receivers check Authorization = hex HMAC-SHA256 of the body)`);
        }))
      .command<Conn & ChangeArgs & { id: string }>('update <id>', 'change fields of a subscription (the rest are kept)', (yy) =>
        changeOptions(withConn(yy)).positional('id', { type: 'string', demandOption: true }),
        async (a) => withApiErrors(async () => render([await client(a).update(a.id, changes(a))], a.format)))
      .command<Conn & { id: string }>('delete <id>', 'delete a subscription', (yy) => withConn(yy).positional('id', { type: 'string', demandOption: true }),
        async (a) => withApiErrors(async () => {
          const r = await client(a).delete(a.id);
          out(a.format === 'json' ? JSON.stringify(r) : `deleted ${r.id}`);
        }))
      .command<Conn & { id: string }>('test <id>', 'send a test delivery now and show what the endpoint answered', (yy) =>
        withConn(yy).positional('id', { type: 'string', demandOption: true }),
        async (a) => withApiErrors(async () => {
          const r = await client(a).test(a.id);
          if (a.format === 'json') return out(JSON.stringify(r));
          out(`verification_status_code\t${r.verification_status_code}\nverification_error\t${r.verification_error ?? '-'}\nevent_id\t${r.event_id ?? '-'}`);
          if (r.verification_error) throw new FoundError('');
        }))
      .command<{ secret: string; signature: string; file?: string }>('verify', 'check a signature: exit 0 if the body (stdin or --file) matches, 1 if not', (yy) =>
        yy.option('secret', { type: 'string', demandOption: true, describe: "the subscription's hmac_secret" })
          .option('signature', { type: 'string', demandOption: true, describe: 'the Authorization header value (hex)' })
          .option('file', { type: 'string', describe: 'read the raw body from this file instead of stdin' }),
        async (a) => {
          let body: Buffer;
          try {
            body = readFileSync(a.file ?? 0);
          } catch (e) {
            throw new UsageError(`${a.file ?? 'stdin'}: cannot read the body: ${(e as Error).message}`);
          }
          if (!verifyWebhookSignature(body, a.signature, a.secret)) throw new FoundError('signature does not match the body');
          out('signature ok');
        })
      .command<{ port: number; host: string; secret: string; format: 'text' | 'json' }>('listen', 'receive deliveries locally, verify each signature and print the event', (yy) =>
        yy.option('port', { type: 'number', default: 9000 }).option('host', { type: 'string', default: '127.0.0.1' })
          .option('secret', { type: 'string', demandOption: true, describe: "the subscription's hmac_secret" })
          .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'json: one line per event (the raw payload)' }),
        async (a) => listen(a))
      .demandCommand(1, 'name a webhooks command: list, get, create, update, delete, test, verify, listen'),
  handler: () => undefined,
};

async function listen(a: { port: number; host: string; secret: string; format: 'text' | 'json' }): Promise<void> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (!verifyWebhookSignature(body, req.headers.authorization, a.secret)) {
        process.stderr.write(`rejected ${req.method} ${req.url}: Authorization does not match the body\n`);
        return res.writeHead(401).end('bad signature');
      }
      const replayOk = verifyStandardWebhook(body, {
        id: req.headers['webhook-id'] as string | undefined, timestamp: req.headers['webhook-timestamp'] as string | undefined,
        signature: req.headers['webhook-signature'] as string | undefined,
      }, a.secret);
      res.writeHead(200).end('ok');
      if (a.format === 'json') return out(body.toString('utf8'));
      let e: { eventType?: string; eventId?: string; data?: Record<string, unknown> } = {};
      try {
        e = JSON.parse(body.toString('utf8'));
      } catch {
        /* printed raw below */
      }
      const d = e.data ?? {};
      out(`${new Date().toISOString()} ${e.eventType ?? '?'} ${e.eventId ?? ''} job=${d.jobId ?? '?'} run=${d.runId ?? '?'} status=${d.runStatus ?? '?'}` +
        (replayOk ? '' : ' (webhook-signature/timestamp not verified)'));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'EADDRINUSE' ? new UsageError(`--port ${a.port}: the port is in use`) : e));
    server.listen(a.port, a.host, () => resolve());
  });
  const addr = server.address();
  process.stderr.write(`runlens webhooks listen: http://${a.host}:${typeof addr === 'object' && addr ? addr.port : a.port}/ (Ctrl-C stops)\n`);
  await new Promise<void>((resolve) => {
    const stop = () => server.close(() => resolve());
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
