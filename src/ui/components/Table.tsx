/** A scrollable table: only the rows in the window are rendered; columns scroll horizontally. */
import { Box, Text } from 'ink';
import { cell, fit, fitLeft, textWidth } from '../format.js';
import { toneProps, useTheme, type Tone } from '../theme.js';

export interface Column {
  key: string;
  title: string;
  width: number;
  right?: boolean;
  /** 1 is kept longest; columns with higher numbers are dropped first on narrow terminals */
  priority?: number;
}

/** The columns that fit `width` (a space after each), dropping the least important first. */
export function fitColumns(columns: Column[], width: number): Column[] {
  const kept = [...columns];
  const total = () => kept.reduce((a, c) => a + c.width + 1, 0);
  while (kept.length > 1 && total() > width) {
    const worst = kept.reduce((w, c) => ((c.priority ?? 0) > (w.priority ?? 0) ? c : w));
    if ((worst.priority ?? 0) === 0) break;
    kept.splice(kept.indexOf(worst), 1);
  }
  return kept;
}

export interface TableProps {
  columns: Column[];
  rows: Record<string, unknown>[];
  cursor: number;
  top: number;
  height: number;
  width: number;
  /** first column shown (horizontal scroll) */
  colOffset?: number;
  tone?: (row: Record<string, unknown>) => Tone;
  /** text for a cell (default: the value) */
  format?: (row: Record<string, unknown>, key: string) => string;
}

/** Column widths from content (a sample of rows), capped so several columns fit. */
export function autoColumns(columns: string[], rows: Record<string, unknown>[], maxWidth = 60): Column[] {
  const sample = rows.slice(0, 200);
  return columns.map((c) => {
    const w = Math.max(textWidth(c), ...sample.map((r) => textWidth(cell(r[c]))));
    const right = sample.length > 0 && sample.every((r) => r[c] === null || typeof r[c] === 'number');
    return { key: c, title: c, width: Math.min(maxWidth, Math.max(3, w)), right };
  });
}

export function Table(p: TableProps) {
  const theme = useTheme();
  const cols = p.columns.slice(p.colOffset ?? 0);
  const line = (get: (c: Column) => string) => {
    let out = '';
    for (const c of cols) {
      if (textWidth(out) >= p.width) break;
      const v = get(c);
      out += (c.right ? fitLeft(v, c.width) : fit(v, c.width)) + ' ';
    }
    return fit(out, p.width);
  };
  const visible = p.rows.slice(p.top, p.top + p.height);
  return (
    <Box flexDirection="column" width={p.width}>
      <Text bold>{line((c) => c.title)}</Text>
      {visible.map((r, i) => {
        const idx = p.top + i;
        const text = line((c) => (p.format ? p.format(r, c.key) : cell(r[c.key])));
        return (
          <Text key={idx} inverse={idx === p.cursor} {...toneProps(theme, p.tone ? p.tone(r) : 'plain')}>
            {text}
          </Text>
        );
      })}
    </Box>
  );
}
