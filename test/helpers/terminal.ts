/**
 * A real terminal for end-to-end tests: one tmux server per terminal, on its own socket, running one
 * command. Keys go in with send-keys; the screen comes back with capture-pane, polled against a
 * deadline (never fixed sleeps).
 *
 * Each terminal has its own server because a server that was just told to exit (kill-server, or its
 * last session ended) can still answer on its socket: a new session on the same socket then fails
 * with "server exited unexpectedly".
 */
import { execFileSync, spawnSync } from 'node:child_process';

export const haveTmux = spawnSync('tmux', ['-V']).status === 0;

let opened = 0;

export interface TerminalOptions {
  width: number;
  height: number;
  cwd?: string;
  /** the command's environment; CI variables are removed, since ink draws only a final frame in CI */
  env?: NodeJS.ProcessEnv;
}

export class Terminal {
  private readonly socket = `runlens-test-${process.pid}-${++opened}`;
  private readonly session = 'main';

  /** Starts `command` in a fresh terminal; when it ends, the terminal shows `EXIT=<code>` and stays. */
  constructor(command: string, opts: TerminalOptions) {
    const env = Object.fromEntries(
      Object.entries(opts.env ?? process.env).filter(([k]) => k !== 'CI' && k !== 'CONTINUOUS_INTEGRATION' && !k.startsWith('CI_')),
    );
    const args = ['new-session', '-d', '-s', this.session, '-x', String(opts.width), '-y', String(opts.height)];
    if (opts.cwd) args.push('-c', opts.cwd);
    this.tmux([...args, `${command}; echo "EXIT=$?"; sleep 600`], env);
  }

  private tmux(args: string[], env?: NodeJS.ProcessEnv): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8', env });
  }

  screen(): string {
    return this.tmux(['capture-pane', '-p', '-t', this.session]);
  }

  /** Waits until the screen matches; the error shows the last screen. */
  async until(test: RegExp | string, what: string, ms = 20_000): Promise<string> {
    const end = Date.now() + ms;
    for (;;) {
      const s = this.screen();
      if (typeof test === 'string' ? s.includes(test) : test.test(s)) return s;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; screen:\n${s}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The exit code the command ended with, waiting for it. */
  async exitCode(ms = 20_000): Promise<number> {
    const s = await this.until(/EXIT=\d+/, 'the command to end', ms);
    return Number(/EXIT=(\d+)/.exec(s)![1]);
  }

  /** Named keys (Enter, j, q...), one at a time, like a person typing. */
  keys(...keys: string[]): void {
    for (const k of keys) this.tmux(['send-keys', '-t', this.session, k]);
  }

  /** Text or escape sequences sent as they are. */
  type(text: string): void {
    this.tmux(['send-keys', '-t', this.session, '-l', text]);
  }

  /** A tmux format evaluated for the pane, e.g. its mouse flags. */
  display(format: string): string {
    return this.tmux(['display', '-p', '-t', this.session, format]).trim();
  }

  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }
}
