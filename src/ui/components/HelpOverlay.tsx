/** `?`: the keys of the current context, generated from the key map (src/ui/keys.ts). */
import { Box, Text } from 'ink';
import { fit } from '../format.js';
import { helpFor, type Context } from '../keys.js';

export function HelpOverlay({ context, width, height }: { context: Context; width: number; height: number }) {
  const rows = helpFor(context);
  const perColumn = Math.max(1, height - 3);
  // more keys than lines: side-by-side columns, so nothing is cut on a small terminal
  const columns = Math.ceil(rows.length / perColumn);
  const w = Math.min(width, columns > 1 ? width : 90);
  const colW = Math.floor((w - 2) / columns);
  const keyW = Math.min(22, Math.max(...rows.map((r) => r.keys.length)) + 1);
  return (
    <Box flexDirection="column" borderStyle="round" width={w}>
      <Text bold>{fit(`keys: ${context}   (Esc or ? closes, q quits)`, w - 2)}</Text>
      <Box flexDirection="row">
        {Array.from({ length: columns }, (_, c) => (
          <Box key={c} flexDirection="column" width={colW}>
            {rows.slice(c * perColumn, (c + 1) * perColumn).map((r, i) => (
              <Text key={i}>{fit(`${r.keys.padEnd(keyW)} ${r.help}`, colW - 1)}</Text>
            ))}
          </Box>
        ))}
      </Box>
    </Box>
  );
}
