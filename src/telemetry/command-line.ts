/**
 * The engine's sub-command in a command line. Options may come before it ("dbt --debug build"), so
 * the first known sub-command is taken, not the word after the program.
 */
export const SUBCOMMANDS = [
  'build', 'run', 'test', 'seed', 'snapshot', 'compile', 'generate', 'serve', 'freshness', 'parse', 'debug', 'deps', 'clean',
  'list', 'ls', 'retry', 'clone', 'show', 'run-operation', 'init', 'sl',
] as const;

const KNOWN = new Set<string>(SUBCOMMANDS);

/** "dbt --log-format json docs generate" -> generate */
export function commandOf(line: string | null | undefined): string | null {
  if (!line) return null;
  const words = line.trim().split(/\s+/);
  const from = Math.max(0, words.findIndex((w) => /(^|\/)dbt$/.test(w)));
  return words.slice(from).find((w) => KNOWN.has(w)) ?? null;
}

/**
 * commandOf in SQL, for a raw_command column: the first known sub-command after the program, else
 * the first word after it that is not an option (a sub-command this list does not know yet).
 */
export function commandOfSql(raw: string): string {
  const words = `string_split(trim(regexp_replace(${raw}, '\\s+', ' ', 'g')), ' ')[2:]`;
  const known = SUBCOMMANDS.map((c) => `'${c}'`).join(', ');
  return `coalesce(list_filter(${words}, w -> w IN (${known}))[1], list_filter(${words}, w -> NOT starts_with(w, '-'))[1])`;
}
