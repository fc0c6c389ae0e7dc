import type { CommandModule } from 'yargs';
import { dataDirOf, openStore } from '../service/cli-options.js';
import { toMicros } from '../service/clock.js';
import { UsageError } from '../errors.js';

interface Args {
  action?: string;
  name?: string;
  data?: string;
  'database-url'?: string;
  format: 'text' | 'json';
}

export const accountsCommand: CommandModule<object, Args> = {
  command: 'accounts <action> [name]',
  describe: 'manage service accounts in a serve data folder (works while serve runs)',
  builder: (y) =>
    y
      .positional('action', { choices: ['create'] as const, describe: 'create: add an account and print its id' })
      .positional('name', { type: 'string', describe: 'account name' })
      .option('data', { type: 'string', describe: 'the data folder serve uses; default $RUNLENS_DATA or ./runlens-data' })
      .option('database-url', { type: 'string', describe: 'PostgreSQL store serve uses (env RUNLENS_DATABASE_URL); instead of --data' })
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const }),
  handler: async (a) => {
    if (!a.name?.trim()) throw new UsageError('accounts create: give the account name, e.g. `runlens accounts create "Acme Analytics"`');
    const store = await openStore(a);
    try {
      const acct = await store.createAccount(a.name.trim(), toMicros(Date.now()));
      const out = { id: acct.id, account_identifier: acct.identifier, name: acct.name };
      process.stdout.write(a.format === 'json' ? JSON.stringify(out) + '\n' : `account_id\t${out.id}\naccount_identifier\t${out.account_identifier}\nname\t${out.name}\n`);
    } finally {
      await store.close();
    }
  },
};
