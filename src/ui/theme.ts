/**
 * Colours by outcome (error, failed tests and failed source freshness red, warned yellow, skipped dim, running cyan).
 * NO_COLOR (any non-empty value) turns colour off; inverse video for the cursor stays, since it
 * is not colour and the cursor must remain visible.
 */
import { createContext, useContext } from 'react';

export interface Theme {
  color: boolean;
}

export function themeFromEnv(env: NodeJS.ProcessEnv = process.env): Theme {
  return { color: !env.NO_COLOR };
}

export const ThemeContext = createContext<Theme>({ color: true });

export function useTheme(): Theme {
  return useContext(ThemeContext);
}

export interface OutcomeFacts {
  node_outcome?: string | null;
  test_outcome?: string | null;
  status_code?: number | null;
  ended?: boolean | null;
  failed?: boolean | null;
  /** sources: a failed freshness is an error (as the gate counts it), a warned one a warning */
  freshness_outcome?: string | null;
}

export type Tone = 'error' | 'warn' | 'skip' | 'ok' | 'running' | 'plain';

export function toneOf(f: OutcomeFacts): Tone {
  if (f.node_outcome === 'error' || f.test_outcome === 'failed' || f.status_code === 2 || f.failed || f.freshness_outcome === 'failed') return 'error';
  if (f.test_outcome === 'warned' || f.freshness_outcome === 'warned') return 'warn';
  if (f.node_outcome === 'skipped' || f.node_outcome === 'canceled') return 'skip';
  if (f.ended === false) return 'running';
  if (f.node_outcome === 'success') return 'ok';
  return 'plain';
}

/** ink <Text> props for a tone. */
export function toneProps(theme: Theme, tone: Tone): { color?: string; dimColor?: boolean } {
  if (!theme.color) return {};
  switch (tone) {
    case 'error':
      return { color: 'red' };
    case 'warn':
      return { color: 'yellow' };
    case 'skip':
      return { dimColor: true };
    case 'running':
      return { color: 'cyan' };
    case 'ok':
      return { color: 'green' };
    default:
      return {};
  }
}
