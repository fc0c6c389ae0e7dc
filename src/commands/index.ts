import type { CommandModule } from 'yargs';
import { mapStatusCommand } from './map-status.js';

/** Every command of the CLI. Each module parses its flags, calls core code and renders. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const commands: CommandModule<any, any>[] = [mapStatusCommand];
