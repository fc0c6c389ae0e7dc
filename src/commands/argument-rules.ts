/**
 * How every command takes its arguments, applied once to the parser (src/cli.ts) rather than by
 * each command: what yargs would otherwise drop or bend without a word.
 */
import type { Argv, MiddlewareFunction } from 'yargs';
import { UsageError } from '../errors.js';
import { EMPTY_ALLOWED, NEEDS } from './options.js';

type Parsed = Record<string, unknown> & { _: (string | number)[]; '--'?: (string | number)[] };
/** The parser yargs passes a middleware beside argv (its typings leave it out), holding the command's options. */
type Declared = { getOptions(): Options };
type Options = { key: Record<string, boolean>; array: string[]; alias: Record<string, string[]>; boolean: string[] };

/** The options each parser's command declares (names and aliases), for unknownOptions. */
const declaredNames = new WeakMap<Argv, Set<string>>();

/**
 * The options in `args` (before `--`) that the command does not have, as written. yargs names one
 * only after counting the words it leaves: an unknown option given before a word takes that word
 * as its value, and yargs says an argument is missing instead (src/cli.ts says this first).
 */
export function unknownOptions(parser: Argv, args: string[]): string[] {
  const known = declaredNames.get(parser);
  if (!known) return [];
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).filter((w) => {
    const m = /^--?([^=]+)/.exec(w);
    if (!m || /^-\d/.test(w)) return false;
    const name = m[1]!;
    return !known.has(name) && !(name.startsWith('no-') && known.has(name.slice(3)));
  });
}

export function applyArgumentRules(parser: Argv, args: string[]): Argv {
  const declared = declareWithValues(parser);
  declaredNames.set(parser, declared.names);
  const usage = usageOfCommandRun(parser, args.includes('--'));
  return parser
    // the words after -- stay apart from the options (yargs would put them, unbound, into `_`);
    // a dot in an option's name is part of it (yargs would make `--out.x` an object of `out`)
    .parserConfiguration({ 'populate--': true, 'dot-notation': false })
    .middleware(((argv: Parsed, y: Declared) => {
      const o = y.getOptions();
      givenOnce(argv, o);
      flagsOnce(o, args);
      notEmpty(argv, o, declared);
      withWhatTheyNeed(argv, o, declared.needs, args);
      keepLoneDash(argv, o, args);
      bindAfterDoubleDash(argv, usage.current, args.includes('--'));
    }) as unknown as MiddlewareFunction, true);
}

/**
 * Every option that takes a value needs one: yargs drops `--format` with nothing after it (or
 * before another option) and uses the default. yargs has no setting for that, so declarations pass
 * through here and get `requiresArg` (a command may still say `requiresArg: false`); list options
 * (listOption) take one word each already. Returns what the value rule below needs.
 */
function declareWithValues(parser: Argv): { positionals: Set<string>; emptyAllowed: Set<string>; needs: Map<string, string>; names: Set<string> } {
  type Declare = (key: string, opt?: Record<string | symbol, unknown>) => Argv;
  const p = parser as unknown as { option: Declare; options: Declare; positional: Declare };
  const option = p.option.bind(parser);
  const positional = p.positional.bind(parser);
  const positionals = new Set<string>();
  const emptyAllowed = new Set<string>();
  const needs = new Map<string, string>();
  const names = new Set(['help', 'h']);
  // yargs declares a positional through option(): it is a word, not an option, and takes no rule here
  let inPositional = false;
  p.positional = (key, opt) => {
    positionals.add(key);
    inPositional = true;
    try {
      return positional(key, opt);
    } finally {
      inPositional = false;
    }
  };
  p.option = p.options = (key, opt) => {
    if (typeof key === 'string' && !inPositional) {
      names.add(key);
      for (const a of [opt?.alias ?? []].flat()) names.add(String(a));
    }
    if (inPositional || typeof key !== 'string' || !opt) return option(key, opt);
    if (typeof opt[NEEDS] === 'string') needs.set(key, opt[NEEDS]);
    if (opt[EMPTY_ALLOWED]) emptyAllowed.add(key);
    else if (opt.array && typeof opt.coerce === 'function') opt = { ...opt, coerce: itemsNotEmpty(key, opt.coerce as (v: unknown) => unknown) };
    const flag = opt.type === 'boolean' || opt.type === 'count' || opt.boolean || opt.count;
    return option(key, flag || opt.array ? opt : { requiresArg: true, ...opt });
  };
  return { positionals, emptyAllowed, needs, names };
}

/** `--trace=` or `--trace ""` gives no value either, unless the option says what empty means (emptyAllowed). */
function notEmpty(argv: Parsed, o: Options, declared: { positionals: Set<string>; emptyAllowed: Set<string> }): void {
  for (const key of Object.keys(o.key)) {
    const v = argv[key];
    if (typeof v !== 'string' || v.trim() !== '' || declared.positionals.has(key) || declared.emptyAllowed.has(key)) continue;
    throw new UsageError(`${optionName(key, o)} needs a value`);
  }
}

/**
 * Nor does an empty item of a list (`--fail-on ""`, `--fail-on error,`), which would otherwise be
 * dropped and leave the default, or a job one step short. Checked on the list as the option's
 * coerce makes it (split at its commas), which runs after the middleware above.
 */
function itemsNotEmpty(key: string, coerce: (v: unknown) => unknown): (v: unknown) => unknown {
  return (v) => {
    const items = coerce(v);
    if (!Array.isArray(items) || !items.some((x) => String(x).trim() === '')) return items;
    const whole = items.every((x) => String(x).trim() === '');
    throw new UsageError(`--${key} needs a value${whole ? '' : ': one of its items is empty (a comma too many?)'}`);
  };
}

/**
 * An option is given once, unless it is a list (an `array` option: listOption, list positionals).
 * yargs makes a repeated option an array, which a command reading one value would take for
 * something else (a table instead of --format json) or fail on.
 */
function givenOnce(argv: Parsed, o: Options): void {
  for (const key of Object.keys(o.key)) {
    if (o.array.includes(key) || !Array.isArray(argv[key])) continue;
    throw new UsageError(`${optionName(key, o)} is given more than once: give it once`);
  }
}

/** An option given (on the command line, not by default) without the flag it needs (`needs`) is a usage error naming both. */
function withWhatTheyNeed(argv: Parsed, o: Options, needs: Map<string, string>, args: string[]): void {
  for (const [key, flag] of needs) {
    if (key in o.key && !argv[flag] && givenAs(key, o, args).length) throw new UsageError(`${optionName(key, o)} needs --${flag}`);
  }
}

/** The words before `--` that give this option (any of its names, `=value` or not, `--no-` of a flag). */
function givenAs(key: string, o: Options, args: string[]): string[] {
  const names = [key, ...(o.alias[key] ?? [])];
  const forms = names.flatMap((n) => (n.length === 1 ? [`-${n}`] : [`--${n}`, `--no-${n}`]));
  return ourWords(args).filter((a) => forms.some((f) => a === f || a.startsWith(`${f}=`)));
}

/** The arguments before `--` (after it nothing is an option). */
const ourWords = (args: string[]): string[] => (args.includes('--') ? args.slice(0, args.indexOf('--')) : args);

/**
 * A flag is given once too, either way, and with a value only `true` or `false`: yargs takes the
 * last of `--lenient --lenient` or `--no-warnings --warnings` without a word, and reads
 * `--lenient=maybe` as false.
 */
function flagsOnce(o: Options, args: string[]): void {
  for (const key of new Set(o.boolean)) {
    if (!(key in o.key) || key === 'help' || key === 'version') continue;
    const words = givenAs(key, o, args);
    const name = optionName(key, o);
    if (words.length > 1) throw new UsageError(`${name} is given more than once${new Set(words).size > 1 ? ` (${words.join(', ')})` : ''}: give it once`);
    const value = words[0]?.includes('=') ? words[0].slice(words[0].indexOf('=') + 1) : undefined;
    if (value !== undefined && value !== 'true' && value !== 'false') throw new UsageError(`${name}: expected true or false, got "${value}"`);
  }
}

/** An option as people write it: the longest of its names (--output rather than -o). */
function optionName(key: string, o: Options): string {
  const name = [key, ...(o.alias[key] ?? [])].sort((a, b) => b.length - a.length)[0]!;
  return `${name.length === 1 ? '-' : '--'}${name}`;
}

/**
 * A lone `-` (standard input, by convention) is a word like any other, but yargs drops it from the
 * positionals: it joins the words after `--`, so the command sees it (a PATH of - is refused as
 * such where PATHs are opened) or says it takes no such argument. `-o -` is the value of -o.
 */
function keepLoneDash(argv: Parsed, o: Options, args: string[]): void {
  const ours = ourWords(args);
  const dashes = ours.filter((a, i) => a === '-' && !takesValue(ours[i - 1], o)).length;
  if (dashes) argv['--'] = [...Array<string>(dashes).fill('-'), ...(argv['--'] ?? [])];
}

/** `--name` or `-n` (without =) of an option that takes a value: the next word is its value. */
function takesValue(word: string | undefined, o: Options): boolean {
  const m = /^--?([^=-][^=]*)$/.exec(word ?? '');
  return !!m && m[1]! in o.key && !o.boolean.includes(m[1]!);
}

/**
 * The usage (`get <job>`) of the command that runs, a subcommand's included: the last whose builder
 * yargs called. With `--` in the arguments its required positionals are declared optional, since
 * yargs counts them before the words after `--` are bound to them (bindAfterDoubleDash checks them).
 */
function usageOfCommandRun(parser: Argv, doubleDash: boolean): { current: string } {
  type Builder = ((y: Argv) => unknown) | undefined;
  type Command = (cmd: unknown, ...rest: unknown[]) => Argv;
  const p = parser as unknown as { command: Command };
  const command = p.command.bind(parser);
  const run = { current: '' };
  const relaxed = (usage: string) => (doubleDash ? usage.replace(/<([\w-]+(?:\.\.)?)>/g, '[$1]') : usage);
  const tracked = (usage: string, builder: Builder) => (y: Argv) => {
    run.current = usage;
    return builder?.(y);
  };
  p.command = (cmd, ...rest) => {
    if (typeof cmd === 'string' && (rest[1] === undefined || typeof rest[1] === 'function')) {
      return command(relaxed(cmd), rest[0], tracked(cmd, rest[1] as Builder), ...rest.slice(2));
    }
    const m = cmd as { command?: unknown; builder?: unknown } | null;
    if (m && typeof m.command === 'string' && (m.builder === undefined || typeof m.builder === 'function')) {
      return command({ ...m, command: relaxed(m.command), builder: tracked(m.command, m.builder as Builder) }, ...rest);
    }
    return command(cmd, ...rest);
  };
  return run;
}

/**
 * After `--` nothing is an option: the words there are the command's positionals (a PATH that
 * starts with a dash, the command `record` runs). They fill, in order, the positionals of the usage
 * not given before `--`, the last `[name..]` taking the rest; a word nothing takes is a usage error,
 * and so is a required positional (`<name>`) that is still missing.
 */
function bindAfterDoubleDash(argv: Parsed, usage: string, doubleDash: boolean): void {
  const words = (argv['--'] ?? []).map(String);
  delete argv['--'];
  if (words.length === 0 && !doubleDash) return;
  const positionals = [...usage.matchAll(/([<[])([\w-]+)(\.\.)?[>\]]/g)].map((m) => ({ name: m[2]!, rest: !!m[3], required: m[1] === '<' }));
  for (const p of positionals) {
    if (words.length === 0) break;
    if (p.rest) argv[p.name] = [...listOf(argv[p.name]), ...words.splice(0)];
    // (yargs reads a positional given as a lone `-` as true, or '' when typed string: it is the `-` moved here)
    else if (argv[p.name] === undefined || argv[p.name] === true || (argv[p.name] === '' && words[0] === '-')) argv[p.name] = words.shift();
  }
  if (words.length) throw new UsageError(`unexpected ${words.length === 1 ? 'argument' : 'arguments'}: ${words.map((w) => `"${w}"`).join(' ')} (the command takes no more)`);
  // (without `--`, yargs counted them already)
  if (!doubleDash) return;
  const missing = positionals.filter((p) => p.required && (argv[p.name] === undefined || (p.rest && listOf(argv[p.name]).length === 0)));
  if (missing.length) throw new UsageError(`missing ${missing.length === 1 ? 'argument' : 'arguments'}: ${missing.map((p) => `<${p.name}${p.rest ? '..' : ''}>`).join(' ')}`);
}

/** A list positional's words so far (yargs may hold [undefined] for none). */
const listOf = (v: unknown): string[] => [v].flat().filter((x) => x !== undefined && x !== null).map(String);
