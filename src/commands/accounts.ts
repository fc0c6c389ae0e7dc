import type { CommandBody } from './command.js';
import { toMicros } from '../service/clock.js';
import type { Account } from '../service/store/types.js';
import { UsageError } from '../errors.js';
import { printFields, printJson, printListing } from '../client/output.js';
import { isoMicros, STORE_MODEL, storeOptions, withStore, type StoreArgs } from './store-args.js';

const FIELDS = ['id', 'account_identifier', 'name', 'created_at'];
const view = (a: Account) => ({ id: a.id, account_identifier: a.identifier, name: a.name, created_at: isoMicros(a.createdAt) });

export const accountsCommand: CommandBody<object> = {
  builder: (y) =>
    y
      .epilogue(STORE_MODEL)
      .command<StoreArgs & { name?: string }>('create <name>', 'add an account and print its id', (yy) =>
        storeOptions(yy).positional('name', { type: 'string', demandOption: true, describe: 'account name (names may repeat; the id tells accounts apart)' })
          .example('$0 accounts create "Acme Analytics" --data ./runlens-data', 'prints the new account id'),
        async (a) => {
          if (!a.name?.trim()) throw new UsageError('accounts create: give the account name, e.g. `runlens accounts create "Acme Analytics"`');
          const acct = view(await withStore(a, (store) => store.createAccount(a.name!.trim(), toMicros(Date.now())), { create: true }));
          if (a.format === 'json') printJson(acct);
          else printFields(acct, FIELDS);
        })
      .command<StoreArgs>('list', 'list every account', (yy) =>
        storeOptions(yy).example('$0 accounts list --data ./runlens-data', ''),
        async (a) => printListing((await withStore(a, (store) => store.listAccounts())).map(view), FIELDS, a.format, 'accounts'))
      .demandCommand(1, 'name an accounts command: create, list')
      .example('$0 accounts create "Acme Analytics" --data ./runlens-data', 'prints the new account id')
      .example('$0 accounts create --help', "one subcommand's options"),
  handler: () => undefined,
};
