/**
 * Query results (and run diffs) as a scrollable table; Enter on a row that names a node opens its
 * run tree at that node.
 */
import { Box, Text } from 'ink';
import { useEffect, useMemo, useState } from 'react';
import type { Tabular } from '../../render/table.js';
import { autoColumns, Table } from '../components/Table.js';
import { fit } from '../format.js';
import type { Context } from '../keys.js';
import { mouseCursor, moveCursor, useWindowTop } from '../list-nav.js';
import { useKeyHandler, useNav, type Size } from '../nav.js';
import { toneOf } from '../theme.js';
import { plural } from '../../render/plural.js';

export interface ResultsViewProps {
  title: string;
  table: Tabular;
  /** the run to jump into when rows carry no trace id */
  traceId?: string;
  context?: Context;
  /** what an empty result means, and what to do */
  empty?: string;
  /** made while files still loaded (what was loading): marked partial until `rerun` makes it again once loading ends */
  partial?: string;
  rerun?: () => Promise<Tabular>;
  size: Size;
  active: boolean;
}

/** The run a row's node is in: its trace_id; in a run diff's row the head run, but the base run for a node that vanished. */
function rowTrace(r: Record<string, unknown>): unknown {
  if (r.trace_id) return r.trace_id;
  return r.change === 'vanished' ? r.base_trace : r.head_trace;
}

function rowTone(r: Record<string, unknown>) {
  const text = ['outcome', 'node_outcome', 'test_outcome', 'head_result', 'change'].map((k) => String(r[k] ?? '')).join(' ');
  if (/error|failed/.test(text)) return 'error' as const;
  if (/warned/.test(text)) return 'warn' as const;
  if (/skipped/.test(text)) return 'skip' as const;
  return toneOf({});
}

export function ResultsView({ title, table: first, traceId, context = 'results', empty, partial: firstPartial, rerun, size, active }: ResultsViewProps) {
  const nav = useNav();
  const [{ table, partial }, setResult] = useState<{ table: Tabular; partial?: string }>({ table: first, partial: firstPartial });
  // a partial answer is made again once every file has loaded (once: a failure is said, not retried)
  const [rerunFailed, setRerunFailed] = useState<string | undefined>();
  useEffect(() => {
    if (!partial || !rerun || nav.loading || rerunFailed) return;
    let live = true;
    rerun().then((t) => live && setResult({ table: t }), (e: unknown) => live && setRerunFailed((e as Error).message));
    return () => {
      live = false;
    };
  }, [partial, rerun, nav.loading, rerunFailed]);
  const [cursor, setCursor] = useState(0);
  const [col, setCol] = useState(0);
  const [message, setMessage] = useState<string | undefined>();
  const height = Math.max(1, size.height - 4);
  const top = useWindowTop(cursor, height, table.rows.length);
  const columns = useMemo(() => autoColumns(table.columns, table.rows), [table]);

  useKeyHandler(active, {
    context: () => context,
    onKey(action) {
      setMessage(undefined);
      const next = moveCursor(action, cursor, table.rows.length, height);
      if (next !== undefined) {
        setCursor(next);
        return true;
      }
      if (action === 'left') return setCol((c) => Math.max(0, c - 1)), true;
      if (action === 'right') return setCol((c) => Math.min(columns.length - 1, c + 1)), true;
      if (action === 'open') {
        const r = table.rows[cursor];
        const uid = r?.unique_id;
        const trace = String((r && rowTrace(r)) ?? traceId ?? '');
        if (typeof uid !== 'string' || !uid) setMessage('this row names no node (no unique_id column)');
        else if (!trace) setMessage('this row names no run (no trace_id column)');
        else {
          // a per-phase row (slowest-nodes' phase:NAME scopes) is about the node's evaluation in that phase
          const phase = String(r?.scope ?? '').startsWith('phase:') ? String(r?.phase ?? '') : undefined;
          nav.push({ type: 'tree', traceId: trace, jump: { uniqueId: uid, phase } });
        }
        return true;
      }
      return false;
    },
    onMouse(e) {
      const next = mouseCursor(e, cursor, table.rows.length, top, 3, height);
      if (next !== undefined) setCursor(next);
    },
  });

  const mark = !partial ? '' : rerunFailed ? `partial (${partial}); running it again failed: ${rerunFailed}  ` : `partial: ${partial}; runs again when loading ends  `;
  const status = message ?? `${mark}${plural(table.rows.length, 'row')}${table.rows.length ? `  row ${cursor + 1}` : ''}  columns ${col + 1}-${columns.length} (h/l)  Enter jumps to the node`;
  return (
    <Box flexDirection="column">
      <Text bold>{fit(title, size.width)}</Text>
      {table.rows.length === 0 ? (
        <Text dimColor>{fit(empty ?? 'the query returned no rows: Esc goes back, : runs another', size.width)}</Text>
      ) : (
        <Table columns={columns} rows={table.rows} cursor={cursor} top={top} height={height} width={size.width} colOffset={col} tone={rowTone} />
      )}
      <Text dimColor>{fit(status, size.width)}</Text>
    </Box>
  );
}
