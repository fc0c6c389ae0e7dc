/** `?`: the keys of the current context, generated from the key map (src/ui/keys.ts). */
import { Box, Text } from 'ink';
import { fit } from '../format.js';
import { helpFor, type Context } from '../keys.js';

export function HelpOverlay({ context, width, height }: { context: Context; width: number; height: number }) {
  const rows = helpFor(context);
  const w = Math.min(width, 90);
  const keyW = Math.min(24, Math.max(...rows.map((r) => r.keys.length)) + 1);
  return (
    <Box flexDirection="column" borderStyle="round" width={w}>
      <Text bold>{fit(`keys: ${context}   (Esc, ? or q closes)`, w - 2)}</Text>
      {rows.slice(0, Math.max(1, height - 3)).map((r, i) => (
        <Text key={i}>{fit(`${r.keys.padEnd(keyW)} ${r.help}`, w - 2)}</Text>
      ))}
    </Box>
  );
}
