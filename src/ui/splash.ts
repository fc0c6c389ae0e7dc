/**
 * The first screen, drawn with plain escape codes before ink, react and DuckDB are loaded (their
 * imports take a noticeable while): the user sees the explorer at once, then the app takes over.
 */
const ENTER_ALT = '\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J';
const LEAVE_ALT = '\x1b[?25h\x1b[?1049l';

export function paintSplash(inputs: string[], out: NodeJS.WriteStream = process.stdout): void {
  const what = inputs.join(', ');
  const width = out.columns || 80;
  const line = (s: string) => (s.length > width ? s.slice(0, width - 1) + '…' : s);
  out.write(`${ENTER_ALT}${line('runlens explore')}\r\n\r\n${line(`loading ${what}…`)}\r\n\r\n${line('q quits · ? keys · : saved queries')}`);
}

export function leaveScreen(out: NodeJS.WriteStream = process.stdout): void {
  // mouse reporting off too (src/ui/mouse.ts), whether or not it was on
  out.write(`\x1b[?1000l\x1b[?1006l${LEAVE_ALT}`);
}
