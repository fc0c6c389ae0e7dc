/** Detail of the selected span: facts, error, upstream chain, failing rows, file, logs, attributes. */
import { Box, Text } from 'ink';
import { attributeLines, CHAIN_CYCLE, type LogLine, type SpanDetail } from '../../analyze/explore/span-detail.js';
import { formatDuration } from '../../render/tree-text.js';
import { fit, textWidth, unended, wrapWords } from '../format.js';
import { toneOf, toneProps, useTheme, type Tone } from '../theme.js';

interface Line {
  text: string;
  tone?: Tone;
  bold?: boolean;
}

/** A log record as one line of text: its time from the start, severity, body (else its event type). */
export const logText = (l: LogLine): string => `+${formatDuration(l.time_ms)} ${l.severity ?? ''} ${l.body || (l.event_type ?? '').split('.').pop()}`;

/** The tone of a log record by its severity. */
export const logTone = (l: LogLine): Tone | undefined => (l.severity === 'ERROR' ? 'error' : l.severity === 'WARN' ? 'warn' : undefined);

/** The pane's content as lines (the pane shows a scrolled window of them). */
export function detailLines(d: SpanDetail, width: number, live: boolean): Line[] {
  const out: Line[] = [];
  const w = Math.max(10, width);
  const wrap = (s: string, tone?: Tone) => {
    for (const text of wrapWords(s, w)) out.push({ text, tone });
  };
  const head = (s: string) => out.push({ text: s, bold: true });
  head(d.name);
  out.push({ text: `kind ${d.kind}  span ${d.span_id}${d.parent_span_id ? `  parent ${d.parent_span_id}` : ''}` });
  if (d.unique_id) out.push({ text: `unique_id ${d.unique_id}` });
  const outcome = [d.node_outcome, d.skip_reason && `skip ${d.skip_reason}`, d.test_outcome && `test ${d.test_outcome}`,
    d.freshness_outcome && `freshness ${d.freshness_outcome}`].filter(Boolean).join('  ');
  if (outcome) out.push({ text: `outcome ${outcome}`, tone: toneOf(d) });
  if (d.failing_rows !== null && d.failing_rows !== undefined) out.push({ text: `failing_rows ${d.failing_rows}`, tone: d.failing_rows > 0 ? 'error' : undefined });
  if (d.relative_path) out.push({ text: `file ${d.relative_path}` });
  if (d.phase) out.push({ text: `phase ${d.phase}` });
  out.push({ text: `duration ${d.ended ? formatDuration(d.duration_ms) : unended(live)}`, tone: d.ended ? undefined : 'running' });
  if (d.status_code === 2 || d.status_message) out.push({ text: `status ${d.status_code ?? ''} ${d.status_message ?? ''}`.trim(), tone: d.status_code === 2 ? 'error' : undefined });
  if (d.error_text) {
    head('error');
    wrap(d.error_text, 'error');
  }
  if (d.chain.length) {
    head(d.chain.at(-1)?.cycle ? 'upstream chain (no root cause: its ids loop)' : 'upstream chain (u jumps to the root cause)');
    d.chain.forEach((c, i) => {
      const what = [c.node_outcome, c.skip_reason, c.test_outcome].filter(Boolean).join('/');
      out.push({ text: `${'  '.repeat(i)}↳ ${c.unique_id} ${what}${c.root ? '  ← root cause' : c.cycle ? `  ← ${CHAIN_CYCLE}` : ''}`, tone: c.root ? 'error' : 'skip' });
    });
  }
  head(`logs (${d.logCount})`);
  if (d.logs.length === 0) out.push({ text: '(none)', tone: 'skip' });
  for (const l of d.logs) wrap(logText(l), logTone(l));
  if (d.logCount > d.logs.length) out.push({ text: `… ${d.logCount - d.logs.length} more (query the logs relation)`, tone: 'skip' });
  head('attributes');
  for (const a of attributeLines(d.attributes)) wrap(a);
  // wrap, never cut: ids and paths are what the pane is for
  return out.flatMap((l) => (textWidth(l.text) <= w ? [l] : wrapWords(l.text, w).map((text) => ({ ...l, text }))));
}

/**
 * `empty`: what the pane says when the run has no span to select (a run of log records only),
 * instead of "no span selected".
 */
export function DetailPane(p: { detail: SpanDetail | undefined; live: boolean; loading: boolean; width: number; height: number; scroll: number; empty?: string }) {
  const theme = useTheme();
  const inner = Math.max(10, p.width - 2);
  const lines = p.detail
    ? detailLines(p.detail, inner, p.live)
    : p.loading
      ? [{ text: 'loading…', tone: 'skip' as Tone }]
      : wrapWords(p.empty ?? 'no span selected', inner).map((text) => ({ text, tone: 'skip' as Tone }));
  const scroll = Math.max(0, Math.min(p.scroll, Math.max(0, lines.length - (p.height - 2))));
  const shown = lines.slice(scroll, scroll + Math.max(1, p.height - 2));
  return (
    <Box flexDirection="column" width={p.width} height={p.height} borderStyle="single" borderDimColor>
      {shown.map((l, i) => (
        <Text key={i} bold={l.bold} {...toneProps(theme, l.tone ?? 'plain')}>
          {fit(l.text, inner)}
        </Text>
      ))}
    </Box>
  );
}
