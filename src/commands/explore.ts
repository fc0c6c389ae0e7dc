import type { CommandModule } from 'yargs';
import { UsageError } from '../errors.js';
import { withModelOptions, type ModelArgs } from './model-args.js';

interface Args extends ModelArgs {
  follow?: boolean;
}

export const exploreCommand: CommandModule<object, Args> = {
  command: 'explore [paths..]',
  describe: 'interactive terminal explorer: runs, span trees, details, saved queries, diffs',
  builder: (y) =>
    withModelOptions(y).option('follow', {
      type: 'boolean',
      default: false,
      describe: 'tail a JSONL file that is still being written and update the view live',
    }),
  handler: async (a) => {
    // ink writes only the final frame when stdout is not a terminal or CI is set: nothing to explore.
    if (!process.stdout.isTTY || !process.stdin.isTTY || process.env.CI) {
      throw new UsageError(
        'explore needs an interactive terminal (stdin and stdout a TTY, CI unset); ' +
          'for scripts use `runlens tree PATH`, `runlens query NAME PATH` or `runlens gate PATH`',
      );
    }
    if ((a.paths ?? []).length === 0 && !a.db) throw new UsageError('give at least one PATH or --db FILE');
    const { paintSplash, leaveScreen } = await import('../ui/splash.js');
    paintSplash([...(a.paths ?? []), ...(a.db ? [a.db] : [])]);
    try {
      // React's development build costs several times more per frame; set before react is loaded.
      process.env.NODE_ENV ??= 'production';
      // Loaded only here, so other commands never pay for ink and react.
      const { runExplorer } = await import('../ui/run.js');
      await runExplorer({ paths: a.paths ?? [], db: a.db, lenient: a.lenient, follow: a.follow });
    } finally {
      leaveScreen();
    }
  },
};
