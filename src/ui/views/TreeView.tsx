/**
 * Run: the span tree of one trace with waterfall bars on a shared time axis, virtualized (only the
 * rows on screen are rendered, only rows near the window are fetched), with filters, incremental
 * search, a detail pane and jump to the root cause of an upstream skip.
 */
import { Box, Text } from 'ink';
import { useEffect, useMemo, useRef, useState } from 'react';
import { criticalSpans, type CriticalMark } from '../../analyze/critical-path.js';
import { CHAIN_CYCLE, runLogs, runLogsSql, spanDetail, upstreamChain, type LogLine, type SpanDetail } from '../../analyze/explore/span-detail.js';
import {
  facets, filterActive, filterPositions, OUTCOME_FILTERS, positionOfNode, positionOfSpan, positionsOfSpans, searchPositions, type TreeFilter, type TreeShape,
} from '../../analyze/explore/tree-index.js';
import { defaultOpen, indexOfPosition, keptMask, nearestIndex, nextPosition, revealPosition, visiblePositions } from '../../analyze/explore/visible.js';
import { fit, unended, wrapWords } from '../format.js';
import { toneProps, useTheme } from '../theme.js';
import type { Action, Context } from '../keys.js';
import { centeredTop, mouseCursor, moveCursor, scrollTop } from '../list-nav.js';
import { WHEEL_ROWS } from '../mouse.js';
import { useKeyHandler, useNav, type Jump, type Size } from '../nav.js';
import { TreeRowLine, treeLayout } from '../components/TreeRowLine.js';
import { DetailPane, logText, logTone } from './DetailPane.js';
import { useRowCache, useTreeShape } from './use-tree-shape.js';
import { plural } from '../../render/plural.js';

export interface TreeViewProps {
  traceId: string;
  jump?: Jump;
  size: Size;
  active: boolean;
}

const NO_MATCHES: Int32Array = new Int32Array(0);

function cycle<T>(values: readonly T[], cur: T | undefined): T | undefined {
  if (values.length === 0) return undefined;
  const i = cur === undefined ? -1 : values.indexOf(cur);
  return i + 1 >= values.length ? undefined : values[i + 1];
}

export function TreeView({ traceId, jump, size, active }: TreeViewProps) {
  const nav = useNav();
  const db = nav.db;
  const cursorPosRef = useRef(0);
  const { shape, open, error, restoredCursor } = useTreeShape(db, traceId, nav.dataVersion, () => cursorPosRef.current);
  const [openVer, setOpenVer] = useState(0);
  const [cursorPos, setCursorPos] = useState(0);
  cursorPosRef.current = cursorPos;
  const [filter, setFilter] = useState<TreeFilter>({});
  const [kept, setKept] = useState<Uint8Array | undefined>();
  // the filter values of one build of the tree (following a file brings new phases and types)
  const [facetValues, setFacets] = useState<{ of?: TreeShape; phases: string[]; resourceTypes: string[] }>({ phases: [], resourceTypes: [] });
  // `done` is the text the matches belong to: a search typed and submitted quickly still runs
  const [search, setSearch] = useState({ editing: false, text: '', matches: NO_MATCHES, done: '' });
  const [detailOpen, setDetailOpen] = useState(false);
  const [detail, setDetail] = useState<SpanDetail | undefined>();
  const [detailScroll, setDetailScroll] = useState(0);
  const [message, setMessage] = useState<string | undefined>();
  const [critical, setCritical] = useState<Map<string, CriticalMark> | undefined>();
  // a run of log records only: its log records, shown where the tree would be
  const [runLogLines, setRunLogLines] = useState<{ logs: LogLine[]; count: number } | undefined>();
  const theme = useTheme();
  const topRef = useRef(0);
  // a jump (root cause, search, a row of a query or diff) shows its target mid-screen
  const centerNext = useRef(false);
  const jumped = useRef(false);

  // Layout: the detail pane sits beside the tree on wide terminals, below it on narrow ones.
  const side = detailOpen && size.width >= 120;
  const treeWidth = side ? Math.floor(size.width * 0.58) : size.width;
  const bodyHeight = Math.max(3, size.height - 2);
  const treeHeight = detailOpen && !side ? Math.max(3, Math.floor(bodyHeight / 2)) : bodyHeight;
  const listHeight = Math.max(1, treeHeight);

  const visible = useMemo(
    () => (shape ? visiblePositions(shape, open, filterActive(filter) ? kept : undefined) : new Int32Array(0)),
    // open is mutated in place; openVer says when
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [shape, open, openVer, kept, filter],
  );
  const cursor = visible.length ? nearestIndex(visible, cursorPos) : 0;
  const centered = centerNext.current && visible.length > 0 && visible[cursor] === cursorPos;
  if (centered) centerNext.current = false;
  const top = centered ? centeredTop(cursor, listHeight, visible.length) : scrollTop(cursor, topRef.current, listHeight, visible.length);
  topRef.current = top;
  const { rows } = useRowCache(db, shape, visible, top, listHeight);
  const selected = visible.length ? rows.get(visible[cursor]!) : undefined;

  const revealAndSelect = (pos: number) => {
    if (!shape) return;
    if (filterActive(filter) && kept && !kept[pos]) setFilter({});
    if (revealPosition(shape, open, pos)) setOpenVer((v) => v + 1);
    centerNext.current = true;
    setCursorPos(pos);
  };

  // After a rebuild (following a file) keep the cursor on the same span.
  useEffect(() => {
    if (restoredCursor !== undefined) setCursorPos(restoredCursor);
  }, [restoredCursor]);

  // First build: jump to the requested node or span (from a query result or a diff row).
  useEffect(() => {
    if (!shape || jumped.current) return;
    jumped.current = true;
    if (!jump) return;
    const find = jump.spanId ? positionOfSpan(db, shape, jump.spanId) : positionOfNode(db, shape, jump.uniqueId ?? '', jump.phase);
    void find.then((p) => {
      if (p === undefined) setMessage(`${jump.uniqueId ?? jump.spanId} is not in this run`);
      else revealAndSelect(p);
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape]);

  // A run without spans: its log records instead (a file being followed may bring its spans later).
  useEffect(() => {
    if (!shape || shape.count > 0) return setRunLogLines(undefined);
    let live = true;
    void runLogs(db, traceId).then((l) => live && setRunLogLines(l), () => undefined);
    return () => {
      live = false;
    };
  }, [db, traceId, shape]);

  // Filter values of this build of the tree.
  useEffect(() => {
    if (!shape) return;
    let live = true;
    void facets(db, shape).then((fv) => live && setFacets({ of: shape, ...fv }), () => undefined);
    return () => {
      live = false;
    };
  }, [db, shape]);

  // After a rebuild (following a file) the kept search is found again: positions have shifted.
  const searchRef = useRef(search);
  searchRef.current = search;
  useEffect(() => {
    const text = searchRef.current.done;
    if (!shape || !text) return;
    let live = true;
    void searchPositions(db, shape, text).then((m) => live && setSearch((s) => (s.done === text ? { ...s, matches: m } : s)), () => undefined);
    return () => {
      live = false;
    };
  }, [db, shape]);

  // Filters: matches from DuckDB, plus their ancestors, in a mask.
  useEffect(() => {
    if (!shape || !filterActive(filter)) {
      setKept(undefined);
      return;
    }
    let live = true;
    void filterPositions(db, shape, filter).then((m) => live && setKept(keptMask(shape, m)), () => undefined);
    return () => {
      live = false;
    };
  }, [db, shape, filter]);

  // Incremental search: a short debounce, then the first match at or after the cursor.
  useEffect(() => {
    if (!shape || search.text === search.done) return;
    let live = true;
    const text = search.text;
    const t = setTimeout(() => {
      void searchPositions(db, shape, text).then((m) => {
        if (!live) return;
        setSearch((s) => ({ ...s, matches: m, done: text }));
        const next = nextPosition(m, cursorPosRef.current - 1, 1);
        if (next !== undefined) revealAndSelect(next);
      }, () => undefined);
    }, search.editing ? 40 : 0);
    return () => {
      live = false;
      clearTimeout(t);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [db, shape, search.text, search.done, search.editing]);

  // Detail of the selected span, once the cursor rests.
  const selectedSpan = selected?.span_id;
  useEffect(() => {
    if (!detailOpen || !selectedSpan) return;
    let live = true;
    const t = setTimeout(() => {
      void spanDetail(db, traceId, selectedSpan).then((d) => {
        if (!live) return;
        setDetail(d);
        setDetailScroll(0);
      }, () => undefined);
    }, 60);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [db, traceId, detailOpen, selectedSpan]);

  // filter values of this trace; a key pressed before they arrived waits for them
  const withFacets = async () => {
    if (!shape || facetValues.of === shape) return facetValues;
    const fv = await facets(db, shape);
    setFacets({ of: shape, ...fv });
    return fv;
  };

  const jumpMatch = (dir: 1 | -1) => {
    const next = nextPosition(search.matches, cursorPos, dir);
    if (next === undefined) return setMessage(search.text ? `no match for "${search.text}"` : 'no search (/ to search)');
    revealAndSelect(next);
  };

  const rootCause = async () => {
    if (!shape || !selected?.unique_id) return setMessage('not a node');
    if (selected.skip_reason !== 'upstream') return setMessage('not skipped because of an upstream node');
    const chain = await upstreamChain(db, traceId, selected.unique_id);
    const root = chain[chain.length - 1];
    if (!root) return setMessage('no upstream node recorded');
    if (root.cycle) return setMessage(`no root cause: ${CHAIN_CYCLE} (${chain.map((c) => c.unique_id).join(' -> ')})`);
    const p = await positionOfNode(db, shape, root.unique_id);
    if (p === undefined) return setMessage(`root cause ${root.unique_id} is not in this run`);
    revealAndSelect(p);
    setMessage(`root cause: ${root.unique_id} (${chain.length} link${chain.length > 1 ? 's' : ''})`);
  };

  const treeKey = (action: Action | undefined): boolean => {
    if (!shape) return action !== 'back' && action !== 'quit' && action !== 'help' && action !== 'palette' && action !== undefined;
    const next = moveCursor(action, cursor, visible.length, listHeight);
    if (next !== undefined) {
      setCursorPos(visible[next] ?? 0);
      return true;
    }
    const pos = visible[cursor] ?? 0;
    const hasKids = shape.size[pos]! > 0;
    const setOpen = (p: number, v: 0 | 1) => {
      if (filterActive(filter)) return setMessage('filters show every match: x clears them');
      open[p] = v;
      setOpenVer((x) => x + 1);
    };
    switch (action) {
      case 'toggle':
        if (hasKids) setOpen(pos, open[pos] ? 0 : 1);
        return true;
      case 'expand':
        if (hasKids && !open[pos]) setOpen(pos, 1);
        else if (hasKids && visible[cursor + 1] !== undefined) setCursorPos(visible[cursor + 1]!);
        return true;
      case 'collapse':
        if (hasKids && open[pos] && !filterActive(filter)) setOpen(pos, 0);
        else if (shape.parent[pos]! >= 0) setCursorPos(shape.parent[pos]!);
        return true;
      case 'expandAll':
        open.fill(1);
        setOpenVer((x) => x + 1);
        return true;
      case 'collapseAll':
        open.set(defaultOpen(shape));
        setOpenVer((x) => x + 1);
        return true;
      case 'detail':
        setDetailOpen((d) => !d);
        return true;
      case 'detailDown':
        setDetailScroll((s) => s + Math.max(1, Math.floor(bodyHeight / 2)));
        return true;
      case 'detailUp':
        setDetailScroll((s) => Math.max(0, s - Math.max(1, Math.floor(bodyHeight / 2))));
        return true;
      case 'rootCause':
        void rootCause().catch((e: unknown) => setMessage((e as Error).message));
        return true;
      case 'search':
        setSearch({ editing: true, text: '', matches: NO_MATCHES, done: '' });
        return true;
      case 'nextMatch':
        jumpMatch(1);
        return true;
      case 'prevMatch':
        jumpMatch(-1);
        return true;
      case 'critical':
        if (critical) setCritical(undefined);
        else {
          setMessage('finding the critical path…');
          void criticalSpans(db, traceId).then(async (m) => {
            setCritical(m);
            // the first marked evaluation in tree order, mid-screen: the highlight is seen at once
            const first = shape ? (await positionsOfSpans(db, shape, [...m.keys()]))[0] : undefined;
            if (first !== undefined) revealAndSelect(first);
            setMessage(m.size ? `critical path: ${m.size} evaluation${m.size === 1 ? '' : 's'} marked ◆ (c hides them)` : 'no critical path: no node evaluation ended in this run');
          }, (e: unknown) => setMessage((e as Error).message));
        }
        return true;
      case 'onlyFailures':
        setFilter((f) => ({ ...f, onlyFailures: !f.onlyFailures }));
        return true;
      case 'cycleOutcome':
        setFilter((f) => ({ ...f, outcome: cycle(OUTCOME_FILTERS, f.outcome as (typeof OUTCOME_FILTERS)[number]) }));
        return true;
      case 'cyclePhase':
        void withFacets().then((fv) => setFilter((f) => ({ ...f, phase: cycle(fv.phases, f.phase) })));
        return true;
      case 'cycleResourceType':
        void withFacets().then((fv) => setFilter((f) => ({ ...f, resourceType: cycle(fv.resourceTypes, f.resourceType) })));
        return true;
      case 'clearFilters':
        setFilter({});
        return true;
      case 'back':
        if (detailOpen) {
          setDetailOpen(false);
          return true;
        }
        if (search.matches.length || search.text) {
          setSearch({ editing: false, text: '', matches: NO_MATCHES, done: '' });
          return true;
        }
        return false;
      default:
        return false;
    }
  };

  const searchKey = (action: Action | undefined, name: string, input: string): boolean => {
    switch (action) {
      case 'submit':
        setSearch((s) => ({ ...s, editing: false }));
        return true;
      case 'cancel':
        setSearch({ editing: false, text: '', matches: NO_MATCHES, done: '' });
        return true;
      case 'erase':
        setSearch((s) => ({ ...s, text: s.text.slice(0, -1) }));
        return true;
      case 'down':
        jumpMatch(1);
        return true;
      case 'up':
        jumpMatch(-1);
        return true;
      case 'quit':
        return false;
      default:
        if (input && !/[\x00-\x1f]/.test(input) && name !== 'tab') setSearch((s) => ({ ...s, text: s.text + input }));
        return true;
    }
  };

  useKeyHandler(active, {
    context: (): Context => (search.editing ? 'search' : detailOpen ? 'detail' : 'tree'),
    onKey(action, name, input) {
      setMessage(undefined);
      return search.editing ? searchKey(action, name, input) : treeKey(action);
    },
    onMouse(e) {
      // the tree's rows start below the header; the detail pane is beside or below them
      const overPane = detailOpen && (side ? e.x > treeWidth : e.y > 1 + treeHeight);
      if (overPane) {
        if (e.kind !== 'click') setDetailScroll((s) => Math.max(0, s + (e.kind === 'wheelDown' ? WHEEL_ROWS : -WHEEL_ROWS)));
        return;
      }
      const next = mouseCursor(e, cursor, visible.length, top, 2, listHeight);
      if (next !== undefined) setCursorPos(visible[next] ?? 0);
    },
  });

  const layout = treeLayout(treeWidth, shape?.spanMs ?? 0);
  const filterText = [
    filter.onlyFailures && 'only failures',
    filter.outcome && `outcome=${filter.outcome === 'running' ? unended(nav.live) : filter.outcome}`,
    filter.phase && `phase=${filter.phase}`,
    filter.resourceType && `type=${filter.resourceType}`,
  ].filter(Boolean).join(' ');
  const header = shape
    ? `run ${traceId.slice(0, 12)}  ${plural(shape.count, 'span')}  ${visible.length} shown${shape.running ? `  ${shape.running} ${unended(nav.live)}` : ''}${filterText ? `  filter: ${filterText}` : ''}`
    : `run ${traceId.slice(0, 12)}  ${error ? `error: ${error}` : 'building tree…'}`;
  const searched = search.text !== '' && search.done === search.text;
  const footer = search.editing
    ? `/${search.text}▏ ${search.matches.length ? `${indexOfPosition(search.matches, visible[cursor] ?? -1) + 1}/${search.matches.length} matches` : searched ? 'no match: Backspace edits, Esc cancels' : ''}`
    : message ?? (search.matches.length ? `"${search.text}": ${search.matches.length} matches (n/N)` : searched ? `no match for "${search.text}": Esc clears the search` : '');
  const empty = shape && visible.length === 0 && filterActive(filter) && kept
    ? `no span matches the filter (${filterText}): x clears it`
    : undefined;

  const lines = [];
  for (let i = top; i < Math.min(visible.length, top + listHeight); i++) {
    const pos = visible[i]!;
    const kids = shape!.size[pos]! > 0;
    // with a filter, a row is open when filtered rows sit below it
    const isOpen = filterActive(filter) && kept ? kept[pos] === 2 : Boolean(open[pos]);
    lines.push(
      <TreeRowLine
        key={i - top}
        row={rows.get(pos)}
        depth={shape!.depth[pos]!}
        expander={kids ? (isOpen ? 'open' : 'closed') : 'leaf'}
        selected={i === cursor}
        match={indexOfPosition(search.matches, pos) >= 0}
        critical={critical !== undefined && critical.has(rows.get(pos)?.span_id ?? '')}
        layout={layout}
        live={nav.live}
      />,
    );
  }
  const noSpans = runLogLines && `no spans: this run has ${plural(runLogLines.count, 'log record')} only`;
  const allLogs = `all of them: runlens query INPUT --sql "${runLogsSql(traceId)}"`;
  const logsOnly = noSpans && `${noSpans}; ${allLogs}`;
  const logsSql = runLogLines ? wrapWords(allLogs, treeWidth) : [];
  const logRows = runLogLines ? [
    <Text key="head" dimColor>{fit(noSpans!, treeWidth)}</Text>,
    ...runLogLines.logs.slice(0, Math.max(0, treeHeight - 1 - logsSql.length)).map((l, i) => (
      <Text key={i} {...toneProps(theme, logTone(l) ?? 'plain')}>{fit(logText(l), treeWidth)}</Text>
    )),
    ...logsSql.map((l, i) => <Text key={`sql${i}`} dimColor>{fit(l, treeWidth)}</Text>),
  ] : undefined;
  const tree = (
    <Box flexDirection="column" width={treeWidth} height={treeHeight}>
      {empty ? <Text dimColor>{fit(empty, treeWidth)}</Text> : logRows ?? lines}
    </Box>
  );
  const pane = detailOpen ? (
    <DetailPane detail={detail} live={nav.live} loading={selectedSpan !== undefined && !detail} empty={logsOnly}
      width={side ? size.width - treeWidth : size.width} height={side ? bodyHeight : bodyHeight - treeHeight} scroll={detailScroll} />
  ) : null;
  return (
    <Box flexDirection="column">
      <Text bold>{fit(header, size.width)}</Text>
      {side ? (
        <Box flexDirection="row">
          {tree}
          {pane}
        </Box>
      ) : (
        <Box flexDirection="column">
          {tree}
          {pane}
        </Box>
      )}
      <Text>{fit(footer, size.width)}</Text>
    </Box>
  );
}
