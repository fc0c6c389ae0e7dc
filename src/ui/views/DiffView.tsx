/** Diff of two runs (marked base, opened head): nodes whose outcome or duration changed. */
import { Text } from 'ink';
import { useEffect, useState } from 'react';
import { diffRuns } from '../../analyze/explore/run-diff.js';
import type { Tabular } from '../../render/table.js';
import { useNav, type Size } from '../nav.js';
import { ResultsView } from './ResultsView.js';
import { plural } from '../../render/plural.js';

export function DiffView({ base, head, size, active }: { base: string; head: string; size: Size; active: boolean }) {
  const nav = useNav();
  const [table, setTable] = useState<Tabular | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    diffRuns(nav.db, base, head).then((t) => live && setTable(t), (e: unknown) => live && setError((e as Error).message));
    return () => {
      live = false;
    };
  }, [nav.db, base, head, nav.dataVersion]);
  if (error) return <Text color="red">diff failed: {error}</Text>;
  if (!table) return <Text dimColor>comparing {base.slice(0, 12)} with {head.slice(0, 12)}…</Text>;
  return (
    <ResultsView
      title={`diff base ${base.slice(0, 12)} → head ${head.slice(0, 12)}: ${plural(table.rows.length, 'node')} changed`}
      table={table}
      context="diff"
      empty="no node changed its outcome or duration (past 50%) between these runs: Esc goes back"
      size={size}
      active={active}
    />
  );
}
