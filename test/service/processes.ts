/** Real `serve` processes from the built CLI, for tests that kill them: started on port 0, all ended by `stopAll`. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { CLI } from '../helpers/cli.js';

export { CLI };

export interface ServeProcess {
  child: ChildProcess;
  base: string;
  /** what it wrote on stderr so far (for failure messages) */
  stderr: () => string;
}

export class ServeProcesses {
  private readonly all: ChildProcess[] = [];

  /** Starts `runlens serve --port 0 ...args` and resolves once it printed the address it listens on. */
  start(args: string[]): Promise<ServeProcess> {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.all.push(child);
    let err = '';
    return new Promise((resolvePromise, reject) => {
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) resolvePromise({ child, base: m[1]!, stderr: () => err });
      });
      child.once('exit', (code, signal) => reject(new Error(`serve exited (${code ?? signal}) before listening: ${err}`)));
    });
  }

  /** kill -9, as a crash would; resolves once the process is gone. */
  async kill(p: ServeProcess): Promise<void> {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return;
    const gone = new Promise((r) => p.child.once('exit', r));
    p.child.kill('SIGKILL');
    await gone;
  }

  /** Ends every process this set started (SIGTERM, then SIGKILL for any still running after 10 s). */
  async stopAll(): Promise<void> {
    await Promise.all(this.all.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(t);
    }));
  }
}
