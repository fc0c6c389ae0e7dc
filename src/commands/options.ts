/** Option shapes shared by the commands, so every command takes lists and values the same way. */
import type { Options, PositionalOptions } from 'yargs';
import { UsageError } from '../errors.js';

/**
 * A list option given by repeats, commas or both: `--fail-on error,skipped --fail-on test-failed`.
 * An `array` option (the only options that may be repeated, see ./argument-rules.ts) that takes one
 * word per repeat (nargs 1), so the PATHs after it stay PATHs. `split` says where a value is cut
 * (default: at every comma; null: never, for values that hold commas themselves, such as commands).
 */
export function listOption(describe: string, split: RegExp | null = /,/) {
  return {
    type: 'string',
    array: true,
    nargs: 1,
    describe: `${describe} (${split ? 'repeat the option or separate by commas' : 'repeat the option'})`,
    // an empty item stays, for the argument rules to refuse with the option's name (never dropped: `--step ''` is no step)
    coerce: (v: string | string[] | undefined): string[] =>
      [v ?? []].flat().flatMap((s) => (split ? String(s).split(split) : [String(s)])).map((s) => s.trim()),
  } satisfies Options;
}

/** `--param k=v,k2=v2`: commas separate pairs only where a `name=` follows, so values may hold commas. */
const PARAM_SPLIT = /,(?=\s*[A-Za-z_][\w-]*=)/;

/**
 * `--param NAME=VALUE`: given once, pairs separated by commas (PARAM_SPLIT); repeated, each is one
 * pair with its whole value, so a value may hold `,NAME=` (`--param s=x,y=z --param n=1`).
 */
export function paramOption(describe: string) {
  const list = listOption(describe, null);
  return {
    ...list,
    describe: `${describe} (repeat the option, each one pair; or give it once with pairs separated by commas)`,
    coerce: (v: string | string[] | undefined): string[] => {
      const items = list.coerce(v);
      return items.length === 1 ? items[0]!.split(PARAM_SPLIT).map((s) => s.trim()) : items;
    },
  } satisfies Options;
}

/** A string option that must be given a value (`--trace` alone or empty is a usage error, not "every run"; see ./argument-rules.ts). */
export function valueOption(describe: string) {
  return { type: 'string', requiresArg: true, describe } satisfies Options;
}

/** Marks an option whose empty value means something (`--job-ids ''`: every job); any other option refuses an empty value. */
export const EMPTY_ALLOWED = Symbol('an empty value means something');
export function emptyAllowed<O extends Options>(o: O): O {
  return { ...o, [EMPTY_ALLOWED]: true };
}

/**
 * Marks an option that means something only beside another (`gate --until-idle` with `--receive`,
 * `jobs run --interval` with `--wait`): given without it, it is a usage error (see ./argument-rules.ts)
 * rather than ignored with its value unchecked.
 */
export const NEEDS = Symbol('the flag this option needs');
export function needs<O extends Options>(flag: string, o: O): O {
  return { ...o, [NEEDS]: flag };
}

/**
 * A variadic positional (`[paths..]`) that is an empty list when nothing is given, shown in --help
 * without yargs's `[default: []]`.
 */
export function listPositional(describe: string) {
  return {
    type: 'string',
    array: true,
    describe,
    default: undefined,
    coerce: (v: unknown): string[] => [v ?? []].flat().filter((x) => x !== undefined && x !== null).map(String),
  } satisfies PositionalOptions;
}

/**
 * A number option that must be a whole number from `min` to `max`, else a usage error naming it
 * (yargs reads `abc` as NaN and takes 1.5 as given). `of`: what it counts; `example`: a valid use.
 */
export function wholeNumber(option: string, v: number, min: number, o: { max?: number; of?: string; example?: string } = {}): number {
  if (Number.isInteger(v) && v >= min && (o.max === undefined || v <= o.max)) return v;
  const range = o.max === undefined ? `${min} or more` : `from ${min} to ${o.max}`;
  const example = o.example ? ` (for example ${o.example})` : '';
  throw new UsageError(`${option}: expected a whole number${o.of ? ` of ${o.of}` : ''}, ${range}${example}; got ${Number.isNaN(v) ? 'something else' : v}`);
}
