import { join } from 'node:path';

/** The SQLite database file of a service data folder (a module of its own: the CLI checks for it without loading SQLite). */
export const sqliteFileIn = (dir: string): string => join(dir, 'runlens.sqlite');
