import { constants } from 'node:os';
import type { CommandBody } from './command.js';
import { UsageError } from '../errors.js';
import { withModelOptions, type ModelArgs } from './model-args.js';
import { receiverOptions, withReceiveOptions, type ReceiveArgs } from './receive-options.js';

interface Args extends ModelArgs, ReceiveArgs {
  follow?: boolean;
  receive?: boolean;
  mouse: boolean;
}

export const exploreCommand: CommandBody<Args> = {
  builder: (y) =>
    withReceiveOptions(withModelOptions(y))
      .option('follow', {
        type: 'boolean',
        default: false,
        describe: 'tail a JSONL file that is still being written and update the view live',
      })
      .option('receive', {
        type: 'boolean',
        default: false,
        describe: 'receive OTLP/HTTP in this process (see --port) and show runs as their spans arrive',
      })
      .option('mouse', {
        type: 'boolean',
        default: true,
        describe: 'the wheel scrolls, a click selects a row; --no-mouse leaves the mouse to the terminal (text selection)',
      })
      .group(['receive', 'port', 'host', 'max-body-mb', 'queue-limit'], 'Live runs (--receive):')
      .example('$0 explore samples/two-runs.jsonl', 'browse runs, trees and queries (q quits, ? shows the keys)')
      .example('$0 explore --receive --port 4318', 'watch runs arrive over OTLP'),
  handler: async (a) => {
    // what cannot be followed is said first: it is wrong in a script as in a terminal
    if (a.follow && !a.receive) (await import('../analyze/explore/follow.js')).assertFollowable(a.paths ?? []);
    // ink writes only the final frame when stdout is not a terminal or CI is set: nothing to explore.
    if (!process.stdout.isTTY || !process.stdin.isTTY || process.env.CI) {
      throw new UsageError(
        'explore needs an interactive terminal (stdin and stdout a TTY, CI unset); ' +
          'for scripts use `runlens tree PATH`, `runlens query NAME PATH` or `runlens gate PATH`',
      );
    }
    if (a.receive && a.follow) throw new UsageError('--receive and --follow do not go together');
    if ((a.paths ?? []).length === 0 && !a.db && !a.receive) throw new UsageError('give at least one PATH or --db FILE (or --receive)');
    const { paintSplash, leaveScreen } = await import('../ui/splash.js');
    paintSplash([...(a.paths ?? []), ...(a.db ? [a.db] : []), ...(a.receive ? [`OTLP on ${a.host}:${a.port}`] : [])]);
    // A signal quits the explorer as q does (what a receiver answered 200 is written to the model,
    // the terminal given back), then the process ends as the signal would (128 + its number). A
    // second signal while it closes changes nothing.
    let ended: NodeJS.Signals | undefined;
    const stop = new AbortController();
    const onSignal = (signal: NodeJS.Signals) => {
      if (ended) return;
      ended = signal;
      // the terminal may be gone (SIGHUP): writes to it fail, and that must not end the process early
      process.stdout.on('error', () => undefined);
      stop.abort();
    };
    const signals = ['SIGTERM', 'SIGHUP'] as const;
    for (const s of signals) process.on(s, onSignal);
    try {
      // React's development build costs much more per frame; set before react is loaded.
      process.env.NODE_ENV ??= 'production';
      // Loaded only here, so other commands never pay for ink and react.
      const { runExplorer } = await import('../ui/run.js');
      await runExplorer({
        paths: a.paths ?? [], db: a.db, lenient: a.lenient, manifest: a.manifest, follow: a.follow, mouse: a.mouse,
        receive: a.receive ? receiverOptions(a) : undefined, stop: stop.signal,
      });
    } finally {
      for (const s of signals) process.off(s, onSignal);
      try {
        leaveScreen();
      } catch {
        // the terminal is gone (SIGHUP): nothing to give back
      }
    }
    if (ended) process.exit(128 + (constants.signals[ended] ?? 0));
  },
};
