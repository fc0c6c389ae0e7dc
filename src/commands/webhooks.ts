import type { Argv } from 'yargs';
import type { CommandBody } from './command.js';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { WebhooksClient, type SubscriptionChanges, type WebhookSubscription } from '../client/webhooks.js';
import { clientConfig, connectionOptions, withApiErrors, type ConnectionArgs } from '../client/cli-config.js';
import { formatOption, out, printFields, printJson, printListing, printTable, type ClientFormat } from '../client/output.js';
import { verifyStandardWebhook, verifyWebhookSignature } from '../client/verify.js';
import { FoundError, UsageError } from '../errors.js';
import { parseId } from '../service/ids.js';
import { emptyAllowed } from './options.js';
import { checkPaging, readListing } from './paging.js';

type Conn = ConnectionArgs & { format: ClientFormat };

const SUBSCRIPTION_COLUMNS = ['id', 'name', 'active', 'archived', 'event_types', 'job_ids', 'client_url', 'http_status_code'];
const SUBSCRIPTION_FIELDS = ['id', 'name', 'description', 'active', 'archived', 'deactivate_reason', 'event_types', 'job_ids', 'client_url',
  'http_status_code', 'dispatched_at', 'account_id', 'account_identifier', 'created_at', 'updated_at'];
const EVENT_FIELDS = ['id', 'subscription_id', 'trigger_event_type', 'job_id', 'status', 'attempts', 'http_status_code', 'created_at'];
const RECEIPT_COLUMNS = ['attempt', 'dispatched_at', 'http_status_code', 'duration_ms', 'error_info', 'response_body'];

function printSubscription(s: WebhookSubscription, format: ClientFormat, extra: string[] = []): void {
  if (format === 'json') return printJson(s);
  printFields(s, [...SUBSCRIPTION_FIELDS, ...extra]);
}

const list = (s: string | undefined) => (s === undefined ? undefined : s.split(',').map((x) => x.trim()).filter(Boolean));
function jobIds(s: string | undefined): number[] | undefined {
  const l = list(s);
  if (!l) return undefined;
  return l.map((x) => {
    const id = parseId(x);
    if (id === null) throw new UsageError(`--job-ids: "${x}" is not a job id (1, 2, ... up to ${Number.MAX_SAFE_INTEGER})`);
    return id;
  });
}

function changeOptions<T>(y: Argv<T>) {
  return y
    .option('name', { type: 'string' })
    .option('url', { type: 'string', describe: 'client_url: the endpoint that receives events' })
    .option('event-types', { type: 'string', describe: 'comma-separated: job.run.started,job.run.completed,job.run.errored' })
    .option('job-ids', emptyAllowed({ type: 'string', describe: "comma-separated job ids; '' = all jobs" }))
    .option('description', emptyAllowed({ type: 'string', describe: "the subscription's description; '' clears it" }))
    .option('active', { type: 'boolean', describe: '--active / --no-active' });
}

type ChangeArgs = { name?: string; url?: string; 'event-types'?: string; 'job-ids'?: string; description?: string; active?: boolean };
const changes = (a: ChangeArgs): SubscriptionChanges => ({
  name: a.name, client_url: a.url, event_types: list(a['event-types']), job_ids: jobIds(a['job-ids']), description: a.description, active: a.active,
});

const client = (a: ConnectionArgs) => new WebhooksClient(clientConfig(a));
const withConn = <T>(y: Argv<T>) => connectionOptions(y).option('format', formatOption);
const idArg = <T>(y: Argv<T>, what = 'subscription id (wsu_...)') => withConn(y).positional('id', { type: 'string', demandOption: true, describe: what });

export const webhooksCommand: CommandBody<object> = {
  builder: (y) =>
    y
      .command<Conn & { limit?: number; offset?: number }>('list', 'list subscriptions (every page from --offset unless --limit)', (yy) =>
        withConn(yy).option('limit', { type: 'number', describe: 'at most this many (1-100)' }).option('offset', { type: 'number', default: 0 })
          .example('$0 webhooks list --format json', 'every subscription as the API answers it'),
        async (a) => withApiErrors(async () => {
          const c = client(a);
          const { items, page } = await readListing(a, (offset, limit) => c.list(offset, limit), (offset) => c.listAll(offset));
          printListing(items, SUBSCRIPTION_COLUMNS, a.format, 'subscriptions', page);
        }))
      .command<Conn & { id: string }>('get <id>', 'show one subscription', (yy) => idArg(yy).example('$0 webhooks get wsu_2abc... --format json', 'one object'),
        async (a) => withApiErrors(async () => printSubscription(await client(a).get(a.id), a.format)))
      .command<Conn & ChangeArgs>('create', 'create a subscription; prints its hmac_secret (shown only now)', (yy) =>
        changeOptions(withConn(yy)).demandOption(['name', 'url', 'event-types'])
          .example('$0 webhooks create --name alerts --url https://hooks.example.com/runlens --event-types job.run.errored,job.run.completed', ''),
        async (a) => withApiErrors(async () => {
          const c = changes(a);
          const s = await client(a).create({ ...c, name: c.name!, client_url: c.client_url!, event_types: c.event_types! });
          printSubscription(s, a.format, ['hmac_secret']);
          if (a.format === 'text') process.stderr.write('keep hmac_secret: it is shown only once; receivers check Authorization = hex HMAC-SHA256 of the body\n');
        }))
      .command<Conn & ChangeArgs & { id: string }>('update <id>', 'change fields of a subscription (the rest are kept)', (yy) =>
        changeOptions(idArg(yy)).example('$0 webhooks update wsu_2abc... --job-ids 12,14 --no-active', ''),
        async (a) => withApiErrors(async () => printSubscription(await client(a).update(a.id, changes(a)), a.format)))
      .command<Conn & { id: string }>('delete <id>', 'delete a subscription', (yy) => idArg(yy).example('$0 webhooks delete wsu_2abc...', ''),
        async (a) => withApiErrors(async () => {
          const r = await client(a).delete(a.id);
          if (a.format === 'json') return printJson(r);
          out(`deleted ${r.id}`);
        }))
      .command<Conn & { id: string }>('test <id>', 'send a test delivery now and show what the endpoint answered (exit 1 if it failed)', (yy) =>
        idArg(yy).example('$0 webhooks test wsu_2abc...', ''),
        async (a) => withApiErrors(async () => {
          const r = await client(a).test(a.id);
          if (a.format === 'json') printJson(r);
          else printFields(r, ['verification_status_code', 'verification_error', 'event_id']);
          if (r.verification_error) throw new FoundError(`the test delivery failed: ${r.verification_error}`);
        }))
      .command<Conn & { id: string; limit: number; offset: number }>('events <id>', "a subscription's delivery log: its events, newest first", (yy) =>
        idArg(yy).option('limit', { type: 'number', default: 20, describe: 'at most this many (1-100)' }).option('offset', { type: 'number', default: 0 })
          .example('$0 webhooks events wsu_2abc... --limit 5', 'the five newest events and how their delivery went'),
        async (a) => withApiErrors(async () => {
          checkPaging(a);
          const page = await client(a).events(a.id, a.offset, a.limit);
          printListing(page.items, EVENT_FIELDS.filter((f) => f !== 'subscription_id'), a.format, 'events', { total: page.total, offset: a.offset });
        }))
      .command<Conn & { id: string; subscription?: string }>('receipt <id>', 'every attempt to deliver one event: status, answer, duration, error', (yy) =>
        idArg(yy, 'event id (wev_..., from `webhooks events`)')
          .option('subscription', { type: 'string', describe: "the event's subscription (wsu_...); found from the event when left out" })
          .example('$0 webhooks receipt wev_2abc...', "the event, then one row per attempt; --format json: the API's receipts"),
        async (a) => withApiErrors(async () => {
          const c = client(a);
          const ev = a.subscription === undefined ? await c.event(a.id) : undefined;
          const receipts = await c.receipts(a.subscription ?? ev!.subscription_id, a.id);
          if (a.format === 'json') return printJson(receipts);
          if (ev) {
            printFields(ev, EVENT_FIELDS);
            out('');
          }
          printTable(receipts, RECEIPT_COLUMNS, '(no attempt yet)');
        }))
      .command<{ secret: string; signature: string; file?: string }>('verify', 'check a signature: exit 0 if the body (stdin or --file) matches, 1 if not', (yy) =>
        yy.option('secret', { type: 'string', demandOption: true, describe: "the subscription's hmac_secret" })
          .option('signature', { type: 'string', demandOption: true, describe: 'the Authorization header value (hex)' })
          .option('file', { type: 'string', describe: 'read the raw body from this file instead of stdin' })
          .example('$0 webhooks verify --secret "$SECRET" --signature 3f1a... --file body.json', ''),
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
          .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'json: one line per event (the raw payload)' })
          .example('$0 webhooks listen --port 9000 --secret "$SECRET"', 'subscribe http://127.0.0.1:9000/ (serve --allow-private-targets) to see each event'),
        async (a) => listen(a))
      .demandCommand(1, 'name a webhooks command: list, get, create, update, delete, test, events, receipt, verify, listen')
      .example('$0 webhooks list', 'the subscriptions of the account (--base-url, --account, --token or RUNLENS_* variables)')
      .example('$0 webhooks create --help', "one subcommand's options"),
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
