import type { CommandModule } from 'yargs';
import { gateCommand } from './gate.js';
import { loadCommand } from './load.js';
import { mapStatusCommand } from './map-status.js';
import { queriesCommand, queryCommand } from './queries.js';
import { receiveCommand } from './receive.js';
import { runsCommand } from './runs.js';
import { treeCommand } from './tree.js';
import { serveCommand } from './serve.js';
import { accountsCommand } from './accounts.js';
import { tokensCommand } from './tokens.js';
import { webhooksCommand } from './webhooks.js';
import { artifactsCommand } from './artifacts.js';
import { exploreCommand } from './explore.js';
import { generateCommand } from './generate.js';
import { convertCommand } from './convert.js';
import { validateCommand } from './validate.js';
import { migrateCommand } from './migrate.js';
import { recordCommandModule } from './record.js';

/** Every command of the CLI. Each module parses its flags, calls core code and renders. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const commands: CommandModule<any, any>[] = [loadCommand, runsCommand, treeCommand, queriesCommand, queryCommand, gateCommand, receiveCommand, mapStatusCommand,
  serveCommand, accountsCommand, tokensCommand, webhooksCommand, artifactsCommand, migrateCommand, generateCommand, convertCommand, validateCommand, recordCommandModule, exploreCommand];
