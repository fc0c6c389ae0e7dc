/**
 * Step commands are stored as the hosted service has them (`dbt build --select x`). They are split
 * into argv here, like a POSIX shell would split words and quotes, but nothing else a shell does
 * (no variables, globs, pipes or `;`), and run only when the executable is on the allowed list.
 */

export function splitCommand(command: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (quote === "'") {
      if (ch === "'") quote = null;
      else cur += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = null;
      else if (ch === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1]!)) cur += command[++i];
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < command.length) {
      cur += command[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote`);
  if (inWord) out.push(cur);
  return out;
}

/** Why a step may not run (null when it may): executables are bare names from the allowed list. */
export function stepRefusal(command: string, allowed: readonly string[]): string | null {
  let argv: string[];
  try {
    argv = splitCommand(command);
  } catch (e) {
    return (e as Error).message;
  }
  const exe = argv[0];
  if (!exe) return 'empty command';
  if (exe.includes('/') || exe.includes('\\')) return `executable "${exe}" must be a bare name from the allowed list (${allowed.join(', ')})`;
  if (!allowed.includes(exe)) return `executable "${exe}" is not allowed; this service runs only: ${allowed.join(', ')} (serve --step-commands)`;
  return null;
}
