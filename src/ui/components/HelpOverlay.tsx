/** `?`: the keys of the current context, generated from the key map (src/ui/keys.ts). */
import { Box, Text } from 'ink';
import stringWidth from 'string-width';
import { fit } from '../format.js';
import { helpFor, type Context } from '../keys.js';

interface KeyHelp {
  keys: string;
  help: string;
}

/** Words of `text` in lines of at most `w` columns (a word longer than a line is cut). */
function wrapWords(text: string, w: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (stringWidth(next) <= w || !line) line = next;
    else {
      lines.push(line);
      line = word;
    }
  }
  lines.push(line);
  return lines.map((l) => fit(l, w).trimEnd());
}

/** Narrower, help would wrap a word or two a line. */
const MIN_HELP_WIDTH = 12;

/**
 * One column's text lines. Aligned: each key, then its help wrapped beside it (undefined when the
 * keys leave the help no room); else each key followed by its help, wrapped under it.
 */
function columnLines(rows: KeyHelp[], colW: number, aligned: boolean): string[] | undefined {
  if (!aligned) return rows.flatMap((r) => wrapWords(`${r.keys}  ${r.help}`, colW - 3).map((l, i) => (i === 0 ? l : `  ${l}`)));
  const keyW = Math.max(...rows.map((r) => stringWidth(r.keys)));
  if (colW - keyW - 2 < MIN_HELP_WIDTH) return undefined;
  return rows.flatMap((r) => {
    const [first = '', ...rest] = wrapWords(r.help, colW - keyW - 2);
    return [fit(`${r.keys.padEnd(keyW)} ${first}`, colW - 1), ...rest.map((l) => `${' '.repeat(keyW + 1)}${l}`)];
  });
}

/**
 * The fewest side-by-side columns in which every key and its whole help fit the lines there are,
 * keys aligned if they can be; on a terminal too small for that, one line per key, cut to its column.
 */
function layout(rows: KeyHelp[], width: number, lines: number): { w: number; columns: string[][] } {
  for (const aligned of [true, false]) {
    for (let count = 1; count <= rows.length; count++) {
      const w = count === 1 ? Math.min(width, 90) : width;
      const colW = Math.floor((w - 2) / count);
      if (colW < MIN_HELP_WIDTH) break;
      const columns: string[][] = [];
      let at = 0;
      while (at < rows.length && columns.length < count) {
        let n = 0;
        while (at + n < rows.length && (columnLines(rows.slice(at, at + n + 1), colW, aligned)?.length ?? Infinity) <= lines) n++;
        if (n === 0) break;
        columns.push(columnLines(rows.slice(at, at + n), colW, aligned)!);
        at += n;
      }
      if (at === rows.length) return { w, columns };
    }
  }
  const count = Math.ceil(rows.length / lines);
  const colW = Math.floor((width - 2) / count);
  return {
    w: width,
    columns: Array.from({ length: count }, (_, c) => rows.slice(c * lines, (c + 1) * lines).map((r) => fit(`${r.keys} ${r.help}`, colW - 1))),
  };
}

export function HelpOverlay({ context, width, height }: { context: Context; width: number; height: number }) {
  const { w, columns } = layout(helpFor(context), width, Math.max(1, height - 3));
  const colW = Math.floor((w - 2) / columns.length);
  return (
    <Box flexDirection="column" borderStyle="round" width={w}>
      <Text bold>{fit(`keys: ${context}   (Esc or ? closes, q quits)`, w - 2)}</Text>
      <Box flexDirection="row">
        {columns.map((lines, c) => (
          <Box key={c} flexDirection="column" width={colW}>
            {lines.map((l, i) => (
              <Text key={i}>{l}</Text>
            ))}
          </Box>
        ))}
      </Box>
    </Box>
  );
}
