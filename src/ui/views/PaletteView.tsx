/**
 * `:` palette of saved queries (queries/*.sql): type to filter, Enter runs the highlighted one.
 * `name k=v ...` sets parameters; in a run, a query's `trace` parameter defaults to that run.
 */
import { Box, Text } from 'ink';
import { useMemo, useState } from 'react';
import { listSavedQueries, parseParamArgs, runSavedQuery, type SavedQuery } from '../../analyze/queries.js';
import { fit } from '../format.js';
import { useKeyHandler, useNav, type Size } from '../nav.js';
import { moveCursor } from '../list-nav.js';
import { useTheme } from '../theme.js';

export interface PaletteProps {
  size: Size;
  traceId?: string;
  onClose(): void;
}

export function PaletteView({ size, traceId, onClose }: PaletteProps) {
  const nav = useNav();
  const theme = useTheme();
  const queries = useMemo<SavedQuery[]>(() => listSavedQueries(), []);
  const [text, setText] = useState('');
  const [cursor, setCursor] = useState(0);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [word, ...rest] = text.trim().split(/\s+/);
  const shown = queries.filter((q) => !word || q.name.includes(word) || q.summary.toLowerCase().includes(word.toLowerCase()));
  const sel = shown[Math.min(cursor, Math.max(0, shown.length - 1))];

  const run = async (q: SavedQuery) => {
    setRunning(true);
    setError(undefined);
    try {
      const params = parseParamArgs(rest.filter(Boolean));
      if (traceId && q.params.some((p) => p.name === 'trace') && params.trace === undefined) params.trace = traceId;
      // asked while files still load, the answer is of the files loaded so far: marked, and made again when all are
      const partial = nav.loadingNote;
      const table = await runSavedQuery(nav.db, q, params);
      const args = Object.entries(params).map(([k, v]) => `${k}=${k === 'trace' ? v.slice(0, 12) : v}`).join(' ');
      onClose();
      nav.push({
        type: 'results', title: `:${q.name}${args ? ` ${args}` : ''}  ${q.summary}`, table, traceId,
        ...(partial ? { partial, rerun: () => runSavedQuery(nav.db, q, params) } : {}),
      });
    } catch (e) {
      setError((e as Error).message);
      setRunning(false);
    }
  };

  useKeyHandler(true, {
    context: () => 'palette',
    onKey(action, name, input) {
      switch (action) {
        case 'cancel':
          if (running) nav.db.conn.interrupt();
          onClose();
          return true;
        case 'submit':
          if (sel && !running) void run(sel);
          return true;
        case 'erase':
          setText((t) => t.slice(0, -1));
          setCursor(0);
          return true;
        case 'quit':
          return false;
        default: {
          const next = moveCursor(action, cursor, shown.length, 10);
          if (next !== undefined) return setCursor(next), true;
          if (input && !/[\x00-\x1f]/.test(input) && name !== 'tab') {
            setText((t) => t + input);
            setCursor(0);
          }
          return true;
        }
      }
    },
  });

  const w = Math.min(size.width, 100);
  const listHeight = Math.max(1, Math.min(shown.length, size.height - 8));
  return (
    <Box flexDirection="column" borderStyle="round" width={w} {...(theme.color ? { borderColor: 'cyan' } : {})}>
      <Text bold>{fit(`:${text}▏`, w - 2)}</Text>
      {shown.slice(0, listHeight).map((q, i) => (
        <Text key={q.name} inverse={q === sel}>
          {fit(`${q.name.padEnd(22)} ${q.summary}`, w - 2)}
        </Text>
      ))}
      {shown.length === 0 && <Text dimColor>{fit(`no saved query matches "${word}": Backspace edits, Esc closes`, w - 2)}</Text>}
      {sel && sel.params.length > 0 && (
        <Text dimColor>{fit(`params: ${sel.params.map((p) => `${p.name}=${p.default || "''"}`).join(' ')}${traceId && sel.params.some((p) => p.name === 'trace') ? '  (trace = this run)' : ''}`, w - 2)}</Text>
      )}
      {running && <Text>running… (Esc cancels)</Text>}
      {error && <Text color={theme.color ? 'red' : undefined}>{fit(error, w - 2)}</Text>}
    </Box>
  );
}
