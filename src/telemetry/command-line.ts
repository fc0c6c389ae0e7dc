/**
 * The engine's sub-command in a command line, one rule in JS (commandOf) and in SQL (commandOfSql):
 * after the program, options are passed over with the values they take (`dbt --target test build`
 * is build, not test), and the first other word is the sub-command; after a group (`docs`,
 * `source`), the word after it.
 */
/** Sub-commands of sub-commands: `dbt docs generate` is generate, `dbt source freshness` freshness. */
const GROUPS = ['docs', 'source'];

/**
 * Options of the engine's CLI that take a value, which `--option value` gives as the next word
 * (`--option=value` is one word). The engine's global options, and dbt-core's, which a command line
 * of either may give before the sub-command; an option not listed is taken as a flag.
 */
export const VALUE_OPTIONS = [
  '--target', '-t', '--profile', '--profiles-dir', '--project-dir', '--packages-install-path', '--target-path', '--vars',
  '--select', '-s', '--models', '-m', '--exclude', '--selector', '--resource-type', '--exclude-resource-type',
  '--indirect-selection', '--threads', '--state', '--defer-state', '--log-path', '--log-format', '--log-format-file',
  '--log-level', '--log-level-file', '--log-file-max-bytes', '--otel-file-name', '--otel-parquet-file-name',
  '--invocation-id', '--parent-span-id', '--warn-error-options', '--printer-width', '--record-timing-info', '-r',
  '--partial-parse-file-path', '--db-root',
];

/** The program: its path may come first (`/usr/local/bin/dbt`), or a runner before it (`uv run dbt`). */
const PROGRAM = '(^|/)dbt$';
/** A word as a shell splits a line: quotes keep their spaces (`--vars '{a: 1, b: 2}'`). */
const WORD = `(?:[^\\s'"]|'[^']*'|"[^"]*")+`;

/** "dbt --log-format json docs generate" -> generate */
export function commandOf(line: string | null | undefined): string | null {
  if (!line) return null;
  const words = line.match(new RegExp(WORD, 'g')) ?? [];
  const program = words.findIndex((w) => new RegExp(PROGRAM).test(w));
  const rest = words.slice(program < 0 ? 1 : program + 1);
  const options = new Set(VALUE_OPTIONS);
  const plain = rest.filter((w, i) => !w.startsWith('-') && !(i > 0 && options.has(rest[i - 1]!)));
  return (GROUPS.includes(plain[0]!) && plain.length > 1 ? plain[1] : plain[0]) ?? null;
}

const sqlText = (s: string): string => `'${s.replaceAll("'", "''")}'`;
const sqlList = (xs: readonly string[]): string => `[${xs.map(sqlText).join(', ')}]`;

/** commandOf in SQL, for a raw_command column (a one-element list binds each step's value to a name). */
export function commandOfSql(raw: string): string {
  const words = `regexp_extract_all(${raw}, ${sqlText(WORD)})`;
  const rest = `w[coalesce(list_position(list_transform(w, x -> regexp_matches(x, ${sqlText(PROGRAM)})), true), 1) + 1:]`;
  const plain = `list_filter(r, (x, i) -> NOT starts_with(x, '-') AND NOT (i > 1 AND list_contains(${sqlList(VALUE_OPTIONS)}, r[i - 1])))`;
  const pick = `CASE WHEN list_contains(${sqlList(GROUPS)}, p[1]) AND len(p) > 1 THEN p[2] ELSE p[1] END`;
  return `list_transform([${words}], w -> list_transform([${rest}], r -> list_transform([${plain}], p -> ${pick})[1])[1])[1]`;
}
