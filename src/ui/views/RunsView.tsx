/** Runs: every run in the input; Enter opens one; m marks a base run, Enter on another compares. */
import { Box, Text } from 'ink';
import { useEffect, useState } from 'react';
import { explorerRuns } from '../../analyze/explore/runs-list.js';
import type { Row } from '../../store/db.js';
import { formatDuration } from '../../render/tree-text.js';
import { fitColumns, Table, type Column } from '../components/Table.js';
import { mouseCursor, moveCursor, useWindowTop } from '../list-nav.js';
import { useKeyHandler, useNav, type Size } from '../nav.js';
import { fit, packFields, unended } from '../format.js';
import { toneOf } from '../theme.js';

const COLUMNS: Column[] = [
  { key: 'mark', title: ' ', width: 1 },
  { key: 'status', title: 'status', width: 9, priority: 1 },
  { key: 'command', title: 'command', width: 10, priority: 2 },
  { key: 'started_at', title: 'started', width: 19, priority: 3 },
  { key: 'duration', title: 'duration', width: 8, right: true, priority: 4 },
  { key: 'nodes', title: 'nodes', width: 6, right: true, priority: 7 },
  { key: 'success', title: 'ok', width: 5, right: true, priority: 8 },
  { key: 'error', title: 'error', width: 5, right: true, priority: 5 },
  { key: 'skipped', title: 'skip', width: 5, right: true, priority: 9 },
  { key: 'tests_passed', title: 't.pass', width: 6, right: true, priority: 10 },
  { key: 'tests_failed', title: 't.fail', width: 6, right: true, priority: 6 },
  { key: 'tests_warned', title: 't.warn', width: 6, right: true, priority: 11 },
  { key: 'trace_id', title: 'trace', width: 32, priority: 12 },
];

/** The selected run's id and what the table had no room for, on as many lines of `width` as that takes. */
function runLines(r: Row, shown: Column[], width: number): string[] {
  const hidden = COLUMNS.filter((c) => c.key !== 'trace_id' && c.key !== 'mark' && !shown.some((s) => s.key === c.key));
  return packFields([
    `trace ${String(r.trace_id)}`,
    ...hidden.map((c) => `${c.title} ${String(r[c.key] ?? '')}`),
    r.canceled ? `canceled ${String(r.canceled)}` : '',
    r.engine_version ? `engine ${String(r.engine_version)}` : '',
  ].filter(Boolean), width);
}

export function RunsView({ size, active }: { size: Size; active: boolean }) {
  const nav = useNav();
  const [runs, setRuns] = useState<Row[]>([]);
  // the selection is a run, not a row: a newer run arriving at the top (following) leaves it be
  const [selected, setSelected] = useState<string | undefined>();
  const cursor = Math.max(0, runs.findIndex((r) => r.trace_id === selected));
  const setCursor = (i: number) => setSelected(runs[i] ? String(runs[i].trace_id) : undefined);
  const [marked, setMarked] = useState<string | undefined>();
  // the columns and the selected run's lines come first: the table's height is what they leave
  // seconds of the start time only where there is room for them
  const wide = size.width >= 110;
  const columns = fitColumns(wide ? COLUMNS : COLUMNS.map((c) => (c.key === 'started_at' ? { ...c, width: 16 } : c)), size.width);
  const footer = runs[cursor] ? runLines(runs[cursor]!, columns, size.width) : [];
  const height = Math.max(1, size.height - 3 - Math.max(1, footer.length));
  const top = useWindowTop(cursor, height, runs.length);

  useEffect(() => {
    let live = true;
    explorerRuns(nav.db).then((r) => {
      if (!live) return;
      setRuns(r);
      // the first run listed, until one is chosen (or when the chosen one is gone)
      setSelected((s) => (r.some((x) => x.trace_id === s) ? s : r[0] ? String(r[0].trace_id) : undefined));
    }, () => undefined);
    return () => {
      live = false;
    };
  }, [nav.db, nav.dataVersion]);

  useKeyHandler(active, {
    context: () => 'runs',
    onKey(action) {
      const next = moveCursor(action, cursor, runs.length, height);
      if (next !== undefined) {
        setCursor(next);
        return true;
      }
      const run = runs[cursor];
      if (!run) return false;
      const id = String(run.trace_id);
      if (action === 'mark') {
        setMarked(marked === id ? undefined : id);
        return true;
      }
      if (action === 'open') {
        if (marked && marked !== id) nav.push({ type: 'diff', base: marked, head: id });
        else nav.push({ type: 'tree', traceId: id });
        return true;
      }
      return false;
    },
    onMouse(e) {
      // rows start below the title and the column header
      const next = mouseCursor(e, cursor, runs.length, top, 3, height);
      if (next !== undefined) setCursor(next);
    },
  });

  const rows = runs.map((r) => ({
    ...r,
    mark: r.trace_id === marked ? '*' : '',
    // a failed run is FAILED whether or not it ended
    status: r.failed ? 'FAILED' : !r.ended ? unended(nav.live) : 'ok',
    started_at: String(r.started_at ?? '').replace('T', ' ').slice(0, wide ? 19 : 16),
    duration: formatDuration(r.duration_s === null ? null : Number(r.duration_s) * 1000),
  }));
  const title = `runs (${runs.length})${nav.listening ? `  receiving OTLP on ${nav.listening}` : ''}`;
  const hint = marked ? `  base marked ${marked.slice(0, 12)}: Enter on another run compares, m unmarks` : '';
  return (
    <Box flexDirection="column">
      <Text bold>
        {title}
        <Text dimColor>{hint}</Text>
      </Text>
      {runs.length === 0 ? (
        <Text dimColor>
          {nav.loading
            ? 'loading…'
            : nav.listening
              ? fit(`no runs yet: point the engine at ${nav.listening} (OTEL_EXPORTER_OTLP_ENDPOINT=${nav.listening})`, size.width)
              : 'no runs in the input'}
        </Text>
      ) : (
        <Table
          columns={columns}
          rows={rows}
          cursor={cursor}
          top={top}
          height={height}
          width={size.width}
          tone={(r) => toneOf({ failed: Boolean(r.failed), ended: r.ended as boolean })}
        />
      )}
      {footer.map((line, i) => (
        <Text key={i} dimColor>
          {line}
        </Text>
      ))}
    </Box>
  );
}
