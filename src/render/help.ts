/** `runlens --help`: the commands by group, from the registry alone (no command module is loaded). */
import type { CommandEntry } from '../commands/index.js';

export function renderTopHelp(commands: Record<string, CommandEntry>, width: number): string {
  const names = Object.keys(commands);
  const nameWidth = Math.max(...names.map((n) => n.length)) + 2;
  const groups = new Map<string, string[]>();
  for (const [name, c] of Object.entries(commands)) groups.set(c.group, [...(groups.get(c.group) ?? []), name]);
  const out = [
    'Usage: runlens <command> [options]',
    '',
    "Explore, gate, translate and produce a data-transformation engine's telemetry; run the job-run webhooks service.",
    '',
  ].flatMap((l) => wrap('', l, width));
  for (const [group, members] of groups) {
    out.push(`${group}:`);
    for (const name of members) out.push(...wrap(`  ${name.padEnd(nameWidth)}`, commands[name]!.describe, width));
    out.push('');
  }
  out.push(
    'Options:',
    `  ${'-h, --help'.padEnd(nameWidth + 4)}show help (also \`runlens <command> --help\`)`,
    `  ${'-V, --version'.padEnd(nameWidth + 4)}show the version`,
    '',
    'Examples:',
    '  runlens tree samples/failed-build.jsonl --depth 2',
    '  runlens gate logs/otel.jsonl --reporter github',
    '',
    ...wrap('', 'Exit codes: 0 fine; 1 the gate or validate found failures; 2 bad usage or unreadable input; 126, 127 the command given to record could not be run or was not found; 130 interrupted (record exits with the code of its command, 128 + the signal when a signal ended it: 143 SIGTERM, 129 SIGHUP).', width),
  );
  return out.join('\n') + '\n';
}

/** `prefix` then `text` word-wrapped to `width` columns, continuation lines indented to the text. */
export function wrap(prefix: string, text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = prefix;
  for (const w of text.split(' ')) {
    if (cur.length > prefix.length && cur.length + 1 + w.length > width) {
      lines.push(cur);
      cur = ' '.repeat(prefix.length) + w;
    } else cur += (cur.length > prefix.length ? ' ' : '') + w;
  }
  lines.push(cur);
  return lines;
}
