/** Runs: every run in the input; Enter opens one; m marks a base run, Enter on another compares. */
import { Box, Text } from 'ink';
import { useEffect, useState } from 'react';
import { listRuns } from '../../analyze/runs.js';
import type { Row } from '../../store/db.js';
import { formatDuration } from '../../render/tree-text.js';
import { Table, type Column } from '../components/Table.js';
import { moveCursor, scrollTop } from '../list-nav.js';
import { useKeyHandler, useNav, type Size } from '../nav.js';
import { toneOf } from '../theme.js';

const COLUMNS: Column[] = [
  { key: 'mark', title: ' ', width: 1 },
  { key: 'status', title: 'status', width: 7 },
  { key: 'command', title: 'command', width: 10 },
  { key: 'started_at', title: 'started', width: 19 },
  { key: 'duration', title: 'duration', width: 8, right: true },
  { key: 'nodes', title: 'nodes', width: 6, right: true },
  { key: 'success', title: 'ok', width: 5, right: true },
  { key: 'error', title: 'error', width: 5, right: true },
  { key: 'skipped', title: 'skip', width: 5, right: true },
  { key: 'tests_failed', title: 't.fail', width: 6, right: true },
  { key: 'tests_warned', title: 't.warn', width: 6, right: true },
  { key: 'trace_id', title: 'trace', width: 32 },
];

export function RunsView({ size, active }: { size: Size; active: boolean }) {
  const nav = useNav();
  const [runs, setRuns] = useState<Row[]>([]);
  const [cursor, setCursor] = useState(0);
  const [top, setTop] = useState(0);
  const [marked, setMarked] = useState<string | undefined>();
  const height = Math.max(1, size.height - 3);

  useEffect(() => {
    let live = true;
    listRuns(nav.db).then((r) => live && setRuns(r), () => undefined);
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
        setTop(scrollTop(next, top, height, runs.length));
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
  });

  const rows = runs.map((r) => ({
    ...r,
    mark: r.trace_id === marked ? '*' : '',
    status: !r.ended ? 'running' : r.failed ? 'FAILED' : 'ok',
    started_at: String(r.started_at ?? '').replace('T', ' ').slice(0, 19),
    duration: formatDuration(r.duration_s === null ? null : Number(r.duration_s) * 1000),
  }));
  const title = `runs (${runs.length})`;
  const hint = marked ? `  base marked ${marked.slice(0, 12)}: Enter on another run compares, m unmarks` : '';
  return (
    <Box flexDirection="column">
      <Text bold>
        {title}
        <Text dimColor>{hint}</Text>
      </Text>
      {runs.length === 0 ? (
        <Text dimColor>{nav.loading ? 'loading…' : 'no runs in the input'}</Text>
      ) : (
        <Table
          columns={COLUMNS}
          rows={rows}
          cursor={cursor}
          top={top}
          height={height}
          width={size.width}
          tone={(r) => toneOf({ failed: Boolean(r.failed), ended: r.ended as boolean })}
        />
      )}
    </Box>
  );
}
