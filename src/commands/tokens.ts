import type { CommandModule } from 'yargs';
import { dataDirOf, openStore } from '../service/cli-options.js';
import { toMicros } from '../service/clock.js';
import { hashToken, newApiToken } from '../service/ids.js';
import { PERMISSION_SETS } from '../service/http/auth.js';
import { UsageError } from '../errors.js';

interface Args {
  action?: string;
  account: number;
  'permission-set': string;
  name: string;
  data?: string;
  'database-url'?: string;
  format: 'text' | 'json';
}

export const tokensCommand: CommandModule<object, Args> = {
  command: 'tokens <action>',
  describe: 'create API tokens for an account in a serve data folder (the token is shown once, stored hashed)',
  builder: (y) =>
    y
      .positional('action', { choices: ['create'] as const })
      .option('account', { type: 'number', demandOption: true, describe: 'account id (from `runlens accounts create`)' })
      .option('permission-set', { type: 'string', demandOption: true, describe: `one of ${PERMISSION_SETS.join(', ')}; writes need account_admin, admin or developer` })
      .option('name', { type: 'string', default: 'api token', describe: 'a label for the token' })
      .option('data', { type: 'string', describe: 'the data folder serve uses; default $RUNLENS_DATA or ./runlens-data' })
      .option('database-url', { type: 'string', describe: 'PostgreSQL store serve uses (env RUNLENS_DATABASE_URL); instead of --data' })
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const }),
  handler: async (a) => {
    if (!(PERMISSION_SETS as readonly string[]).includes(a['permission-set'])) {
      throw new UsageError(`--permission-set: unknown "${a['permission-set']}"; use one of ${PERMISSION_SETS.join(', ')}`);
    }
    const store = await openStore(a);
    try {
      if (!Number.isInteger(a.account) || !(await store.getAccount(a.account))) {
        throw new UsageError(`--account: no account ${a.account} in ${a['database-url'] || process.env.RUNLENS_DATABASE_URL ? 'the database' : dataDirOf(a.data)}; create one with \`runlens accounts create NAME\``);
      }
      const token = newApiToken();
      const rec = await store.createToken({ accountId: a.account, permissionSet: a['permission-set'], name: a.name, tokenHash: hashToken(token), now: toMicros(Date.now()) });
      const out = { id: rec.id, account_id: rec.accountId, permission_set: rec.permissionSet, name: rec.name, token };
      process.stdout.write(a.format === 'json' ? JSON.stringify(out) + '\n'
        : `token_id\t${out.id}\naccount_id\t${out.account_id}\npermission_set\t${out.permission_set}\ntoken\t${out.token}\n`);
    } finally {
      await store.close();
    }
  },
};
