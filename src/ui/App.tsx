/**
 * The explorer: a stack of screens (runs > run tree > results ...), overlays for help and the
 * query palette, a status line with load progress. Paints at once; data arrives in the background.
 */
import { Box, Text, useApp, useInput, useStdout } from 'ink';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { Db } from '../store/db.js';
import { HelpOverlay } from './components/HelpOverlay.js';
import { progressBar, statusBar } from './format.js';
import { charName, hintsFor, keyName, resolveKey, type Context } from './keys.js';
import { parseMouse } from './mouse.js';
import { NavContext, type KeyHandler, type Nav, type Screen, type Size } from './nav.js';
import { ThemeContext, themeFromEnv, type Theme } from './theme.js';
import { DiffView } from './views/DiffView.js';
import { PaletteView } from './views/PaletteView.js';
import { ResultsView } from './views/ResultsView.js';
import { RunsView } from './views/RunsView.js';
import { TreeView } from './views/TreeView.js';
import { plural } from '../render/plural.js';

export interface LoaderHooks {
  /** `files`: of the files to load, how many are done */
  progress(fraction: number, label: string, files?: { done: number; count: number }): void;
  /** receiving over OTLP at this address (explore --receive) */
  listening?(url: string): void;
  /** a load finished (initial or a batch while following): screens refresh */
  loaded(note?: string): void;
}

export interface AppProps {
  /** the connection screens read from */
  db: Db;
  /** loads the input in the background (absent: the db is already loaded) */
  loader?: (hooks: LoaderHooks) => Promise<void>;
  /** fixed size (tests); default: the terminal's, following resizes */
  width?: number;
  height?: number;
  theme?: Theme;
  /** shown in the status line */
  label?: string;
  /** data may still arrive (following a file, receiving): what has not ended is running */
  live?: boolean;
  onFatal?: (e: unknown) => void;
}

function useTerminalSize(width?: number, height?: number): Size {
  const { stdout } = useStdout();
  const read = useCallback(() => ({ width: width ?? (stdout.columns || 100), height: height ?? (stdout.rows || 30) }), [stdout, width, height]);
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => setSize(read());
    onResize();
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout, read]);
  return size;
}

let nextId = 1;

export function App(p: AppProps) {
  const { exit } = useApp();
  const term = useTerminalSize(p.width, p.height);
  const theme = useMemo(() => p.theme ?? themeFromEnv(), [p.theme]);
  const [stack, setStack] = useState<Screen[]>([{ id: 0, type: 'runs' }]);
  const [help, setHelp] = useState<Context | undefined>();
  const [palette, setPalette] = useState(false);
  const [loading, setLoading] = useState<{ fraction: number; label: string; files?: { done: number; count: number } } | undefined>(p.loader ? { fraction: 0, label: 'starting' } : undefined);
  const [dataVersion, setDataVersion] = useState(0);
  const [note, setNote] = useState<string | undefined>();
  const [context, setContext] = useState<Context>('runs');
  const [listening, setListening] = useState<string | undefined>();
  const keys = useRef<{ current: KeyHandler } | null>(null);

  useEffect(() => {
    if (!p.loader) return;
    let last = 0;
    p.loader({
      progress(fraction, label, files) {
        // at most ten redraws a second from progress
        const now = Date.now();
        if (now - last < 100 && fraction < 1) return;
        last = now;
        setLoading({ fraction, label, files });
      },
      listening: setListening,
      loaded(n) {
        setLoading(undefined);
        setNote(n);
        setDataVersion((v) => v + 1);
      },
    }).catch((e: unknown) => {
      setLoading(undefined);
      if (p.onFatal) p.onFatal(e);
      else setNote(`load failed: ${(e as Error).message}`);
    });
    // the loader runs once per mount
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const nav: Nav = useMemo(
    () => ({
      db: p.db,
      dataVersion,
      loading: loading !== undefined,
      loadingNote: loading ? (loading.files ? `loading ${loading.files.done} of ${plural(loading.files.count, 'file')}` : 'still loading') : undefined,
      live: p.live ?? false,
      listening,
      push: (s) => setStack((st) => [...st, { ...s, id: nextId++ } as Screen]),
      pop: () => setStack((st) => (st.length > 1 ? st.slice(0, -1) : st)),
      setKeys: (h) => {
        keys.current = h;
      },
      clearKeys: (h) => {
        if (keys.current === h) keys.current = null;
      },
      status: setNote,
      setContext,
    }),
    [p.db, dataVersion, loading, listening, p.live],
  );

  const dispatch = (input: string, name: string) => {
    if (help) {
      const a = resolveKey('help', name);
      if (a === 'quit') exit();
      else if (a === 'back') setHelp(undefined);
      return;
    }
    const h = keys.current?.current;
    const ctx = h?.context() ?? 'global';
    const action = resolveKey(ctx, name);
    if (h && h.onKey(action, name, input)) return;
    switch (action) {
      case 'quit':
        exit();
        break;
      case 'help':
        setHelp(ctx);
        break;
      case 'palette':
        setPalette(true);
        break;
      case 'back':
        setStack((st) => (st.length > 1 ? st.slice(0, -1) : st));
        break;
      default:
    }
  };
  const dispatchRef = useRef(dispatch);
  dispatchRef.current = dispatch;

  // One key per render: a key is handled only after the render of the previous one has committed
  // (so it sees that state and the key handler that render registered), even when keys arrive
  // faster than React renders. The common case, a key while nothing is pending, is handled at once,
  // and its tick re-render is batched with the screen's own update. Keys typed faster than ink reads
  // arrive as one chunk ("jjd") and are split here.
  const queue = useRef<{ input: string; name: string }[]>([]);
  const pending = useRef(false);
  const [, setTick] = useState(0);
  const handleNext = () => {
    const k = queue.current.shift();
    if (!k) return;
    pending.current = true;
    dispatchRef.current(k.input, k.name);
    setTick((t) => t + 1);
  };
  useLayoutEffect(() => {
    pending.current = false;
    handleNext();
  });

  useInput((input, key) => {
    const mouse = parseMouse(input);
    if (mouse === 'ignored') return;
    if (mouse) {
      if (!help) keys.current?.current.onMouse?.(mouse);
      return;
    }
    if (input.length > 1 && !key.ctrl && !key.meta && !input.includes('\x1b')) {
      for (const c of input) queue.current.push({ input: c, name: charName(c) });
    } else queue.current.push({ input, name: keyName(input, key) });
    if (!pending.current) handleNext();
  });

  // One line less than the terminal: a frame as tall as the screen makes ink clear and repaint.
  const frameHeight = Math.max(5, term.height - 1);
  const size: Size = { width: term.width, height: frameHeight - 1 };
  const top = stack[stack.length - 1]!;
  const treeOf = [...stack].reverse().find((s) => s.type === 'tree') as Extract<Screen, { type: 'tree' }> | undefined;
  const overlay = help !== undefined || palette;
  const crumbs = stack.map((s) => (s.type === 'tree' ? `run ${s.traceId.slice(0, 8)}` : s.type === 'results' ? 'results' : s.type)).join(' › ');
  const status = loading
    ? `loading ${progressBar(loading.fraction, 20)} ${(loading.fraction * 100).toFixed(0).padStart(3)}% ${loading.label}`
    : `${note ? `${note}  ·  ` : ''}${crumbs}${p.label ? `  ·  ${p.label}` : ''}`;
  const allHints = hintsFor(help !== undefined ? 'help' : palette ? 'palette' : context);
  // while loading, the progress needs the room more than the screen's keys do
  const hints = loading ? allHints.filter((h) => h.hint === 'keys' || h.hint === 'quit') : allHints;

  return (
    <ThemeContext.Provider value={theme}>
      <NavContext.Provider value={nav}>
        <Box flexDirection="column" width={term.width} height={frameHeight}>
          <Box flexDirection="column" height={frameHeight - 1}>
            {help !== undefined && <HelpOverlay context={help} width={size.width} height={size.height} />}
            {palette && !help && <PaletteView size={size} traceId={treeOf?.traceId} onClose={() => setPalette(false)} />}
            {stack.map((s) => (
              <Box key={s.id} display={s === top && !overlay ? 'flex' : 'none'} flexDirection="column">
                {renderScreen(s, size, s === top && !overlay)}
              </Box>
            ))}
          </Box>
          <Text inverse={theme.color}>{statusBar(status, hints, term.width)}</Text>
        </Box>
      </NavContext.Provider>
    </ThemeContext.Provider>
  );
}

function renderScreen(s: Screen, size: Size, active: boolean) {
  switch (s.type) {
    case 'runs':
      return <RunsView size={size} active={active} />;
    case 'tree':
      return <TreeView traceId={s.traceId} jump={s.jump} size={size} active={active} />;
    case 'results':
      return <ResultsView title={s.title} table={s.table} traceId={s.traceId} partial={s.partial} rerun={s.rerun} size={size} active={active} />;
    case 'diff':
      return <DiffView base={s.base} head={s.head} size={size} active={active} />;
  }
}
