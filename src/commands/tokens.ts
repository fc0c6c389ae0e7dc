import type { CommandBody } from './command.js';
import { toMicros } from '../service/clock.js';
import { hashToken, newApiToken, parseId } from '../service/ids.js';
import { PERMISSION_SETS, writeAccessSummary } from '../service/http/auth.js';
import type { TokenInfo } from '../service/store/types.js';
import { UsageError } from '../errors.js';
import { valueOption } from './options.js';
import { out, printFields, printJson, printListing } from '../client/output.js';
import { isoMicros, STORE_MODEL, storeName, storeOptions, withStore, type StoreArgs } from './store-args.js';

const FIELDS = ['id', 'account_id', 'permission_set', 'name', 'created_at'];
const view = (t: TokenInfo) => ({ id: t.id, account_id: t.accountId, permission_set: t.permissionSet, name: t.name, created_at: isoMicros(t.createdAt) });

/** Ids only in their canonical form, as the API takes them (account 01 is not account 1 there). */
const idArg = (flag: string, what: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  const id = parseId(String(v));
  if (id === null) throw new UsageError(`${flag}: expected ${what} id (1, 2, ... up to ${Number.MAX_SAFE_INTEGER}), got "${v}"`);
  return id;
};

const noAccount = (account: number, where: string) =>
  new UsageError(`--account: no account ${account} in ${where}; create one with \`runlens accounts create NAME\``);

export const tokensCommand: CommandBody<object> = {
  builder: (y) =>
    y
      .epilogue(STORE_MODEL)
      .command<StoreArgs & { account: string; 'permission-set': string; name: string }>('create', 'make a token for one account and print it (only now)', (yy) =>
        storeOptions(yy)
          .option('account', { ...valueOption('account id (from `runlens accounts create`)'), demandOption: true })
          .option('permission-set', { type: 'string', demandOption: true, describe: `one of ${PERMISSION_SETS.join(', ')}. Who may write: ${writeAccessSummary()}` })
          .option('name', { type: 'string', default: 'api token', describe: 'a label for the token' })
          .example('$0 tokens create --account 1 --permission-set developer --name ci --data ./runlens-data', ''),
        async (a) => {
          if (!(PERMISSION_SETS as readonly string[]).includes(a['permission-set'])) {
            throw new UsageError(`--permission-set: unknown "${a['permission-set']}"; use one of ${PERMISSION_SETS.join(', ')}`);
          }
          const account = idArg('--account', 'an account', a.account)!;
          const made = await withStore(a, async (store) => {
            if (!(await store.getAccount(account))) throw noAccount(account, storeName(a));
            const token = newApiToken();
            const now = toMicros(Date.now());
            const rec = await store.createToken({ accountId: account, permissionSet: a['permission-set'], name: a.name, tokenHash: hashToken(token), now });
            return { ...view({ ...rec, createdAt: now }), token };
          });
          if (a.format === 'json') printJson(made);
          else printFields(made, [...FIELDS, 'token']);
        })
      .command<StoreArgs & { account?: string }>('list', 'list tokens: id, account, permission set, name, when made (never the token)', (yy) =>
        storeOptions(yy).option('account', valueOption("only this account's tokens"))
          .example('$0 tokens list --account 1 --data ./runlens-data', ''),
        async (a) => {
          const account = idArg('--account', 'an account', a.account);
          const tokens = await withStore(a, async (store) => {
            if (account !== undefined && !(await store.getAccount(account))) throw noAccount(account, storeName(a));
            return store.listTokens(account);
          });
          printListing(tokens.map(view), FIELDS, a.format, 'tokens');
        })
      .command<StoreArgs & { id: string }>('revoke <id>', 'delete a token: requests with it get 401 from then on', (yy) =>
        storeOptions(yy).positional('id', { type: 'string', demandOption: true, describe: 'token id (from `runlens tokens list`)' })
          .example('$0 tokens revoke 3 --data ./runlens-data', ''),
        async (a) => {
          const id = idArg('ID', 'a token', a.id)!;
          const gone = await withStore(a, (store) => store.revokeToken(id));
          if (!gone) throw new UsageError(`tokens revoke: no token ${id} in ${storeName(a)}; \`runlens tokens list\` shows them`);
          const v = view(gone);
          if (a.format === 'json') printJson(v);
          else out(`revoked token ${v.id} (account ${v.account_id}, ${v.permission_set}, "${v.name}")`);
        })
      .demandCommand(1, 'name a tokens command: create, list, revoke')
      .example('$0 tokens create --account 1 --permission-set developer --data ./runlens-data', 'prints the token once')
      .example('$0 tokens create --help', "one subcommand's options"),
  handler: () => undefined,
};
