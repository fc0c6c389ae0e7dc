/** One line of the span tree: indent, expander, name, outcome facts, duration, waterfall bar. */
import { Box, Text } from 'ink';
import { memo } from 'react';
import type { TreeRow } from '../../analyze/explore/tree-index.js';
import { formatDuration } from '../../render/tree-text.js';
import { cut, middle, textWidth, unended, waterfallSpan } from '../format.js';
import { toneOf, toneProps, useTheme } from '../theme.js';

export interface TreeLayout {
  width: number;
  nameWidth: number;
  factsWidth: number;
  durWidth: number;
  barWidth: number;
  totalMs: number;
}

export function treeLayout(width: number, totalMs: number): TreeLayout {
  const durWidth = 8;
  const factsWidth = width >= 100 ? 24 : 16;
  const rest = Math.max(10, width - durWidth - factsWidth - 3);
  const barWidth = width >= 90 ? Math.max(10, Math.floor(rest * 0.35)) : 0;
  const nameWidth = Math.max(10, rest - barWidth);
  return { width, nameWidth, factsWidth, durWidth, barWidth, totalMs };
}

/** Short outcome text: error, skipped:upstream, test failed (2), freshness failed, running (or not ended), ... */
export function facts(r: TreeRow, live: boolean): string {
  const out: string[] = [];
  if (r.test_outcome && r.test_outcome !== 'passed') out.push(`test ${r.test_outcome}${r.failing_rows ? ` (${r.failing_rows})` : ''}`);
  else if (r.test_outcome === 'passed') out.push('test passed');
  if (r.node_outcome === 'skipped') out.push(r.skip_reason ? `skipped:${r.skip_reason}` : 'skipped');
  else if (r.node_outcome && !(r.node_outcome === 'success' && r.test_outcome)) out.push(r.node_outcome);
  if (!r.node_outcome && r.status_code === 2) out.push('error');
  if (r.freshness_outcome === 'failed' || r.freshness_outcome === 'warned') out.push(`freshness ${r.freshness_outcome}`);
  if (!r.ended) out.push(unended(live));
  if (r.orphan) out.push('orphan');
  if (r.cycle) out.push('cycle');
  if (r.dur_ms !== null && r.dur_ms < 0) out.push('ends before it starts');
  return out.join(' ');
}

export interface RowLineProps {
  row: TreeRow | undefined;
  depth: number;
  expander: 'open' | 'closed' | 'leaf';
  selected: boolean;
  match: boolean;
  /** on the run's critical path (shown while the highlight is on) */
  critical?: boolean;
  layout: TreeLayout;
  /** data may still arrive: spans not ended are running */
  live: boolean;
}

/**
 * Columns are Boxes of fixed width rather than space padding: ink tokenizes every character it
 * writes on every frame, so unwritten gaps make each frame cheaper (the hot path while scrolling).
 */
export const TreeRowLine = memo(function TreeRowLine({ row, depth, expander, selected, match, critical, layout, live }: RowLineProps) {
  const theme = useTheme();
  const exp = expander === 'open' ? '▾ ' : expander === 'closed' ? '▸ ' : '  ';
  const indent = '  '.repeat(Math.min(depth, 30));
  // a text marker besides inverse video: visible without colour and in screen captures
  const marker = selected ? '›' : match ? '*' : critical ? '◆' : ' ';
  if (!row) return <Text dimColor>{`${marker}${indent}${exp}…`}</Text>;
  const tone = toneOf(row);
  const props = toneProps(theme, tone);
  const prefix = cut(`${marker}${indent}${exp}`, layout.nameWidth);
  const name = prefix + middle(row.name, layout.nameWidth - textWidth(prefix));
  const f = cut(facts(row, live), layout.factsWidth);
  // a span that never ended has no duration; the facts say so
  const d = cut(row.ended ? formatDuration(row.dur_ms) : live ? 'running' : '', layout.durWidth);
  const span = layout.barWidth ? waterfallSpan(row.off_ms, row.dur_ms, layout.totalMs, layout.barWidth, !row.ended) : undefined;
  // the critical path's bars stand out without colour too
  const bar = span && critical ? { ...span, text: span.text.replace(/█/g, '▓') } : span;
  const barProps = critical && theme.color ? { color: 'magenta' } : props;
  return (
    <Box height={1} width={layout.width}>
      <Box width={layout.nameWidth + 1} flexShrink={0}>
        <Text inverse={selected} bold={(match || Boolean(critical)) && !selected} {...(tone === 'skip' ? props : {})}>{name}</Text>
      </Box>
      <Box width={layout.factsWidth + 1} flexShrink={0}>
        <Text {...props}>{f}</Text>
      </Box>
      <Box width={layout.durWidth + 1} flexShrink={0} justifyContent="flex-end">
        <Text>{d + ' '}</Text>
      </Box>
      {bar && (
        <Box width={layout.barWidth} paddingLeft={bar.start} flexShrink={0}>
          <Text {...barProps}>{bar.text}</Text>
        </Box>
      )}
    </Box>
  );
});
