/**
 * Start the explorer in the terminal (the caller has painted the splash on the alternate screen): the App, the input loaded
 * in the background (or followed, or received over OTLP). Errors that stop the load end the app and are rethrown for
 * src/cli.ts to report.
 */
import { render } from 'ink';
import { assertFollowable, Follower, followNote } from '../analyze/explore/follow.js';
import { receiveLive } from '../analyze/explore/receive.js';
import { closeReader, readerFor } from '../analyze/explore/reader.js';
import type { OtlpReceiver, ReceiverOptions } from '../ingest/otlp-receiver.js';
import { loadCommand, loadPaths } from '../store/load.js';
import { openModelFor } from '../store/open.js';
import { App, type LoaderHooks } from './App.js';
import { MOUSE_ON } from './mouse.js';
import { plural } from '../render/plural.js';

export interface ExploreOptions {
  paths: string[];
  db?: string;
  lenient?: boolean;
  /** older-engine files: the manifest.json to read them with (default: the one beside each) */
  manifest?: string;
  follow?: boolean;
  /** receive OTLP/HTTP into the model while exploring */
  receive?: Omit<ReceiverOptions, 'db'>;
  /** the wheel scrolls and a click selects (the terminal reports the mouse); off: the terminal keeps text selection */
  mouse?: boolean;
  /** quits the explorer as q does (a signal): what it received is still written before it returns */
  stop?: AbortSignal;
}

export async function runExplorer(o: ExploreOptions): Promise<void> {
  const followFile = o.follow ? assertFollowable(o.paths) : undefined;
  // reading never writes: only a receiving explorer writes its --db model
  // a receiving explorer shows the model's runs: one that lacks an unfinished load's files is refused as readers refuse it
  const db = await openModelFor({
    db: o.db, writes: o.receive !== undefined, adding: o.paths.length > 0, shows: true,
    load: o.paths.length > 0 ? loadCommand(o.paths, o) : undefined,
  });
  const reader = await readerFor(db);
  let follower: Follower | undefined;
  let receiver: OtlpReceiver | undefined;
  let fatal: unknown;
  let loading: Promise<void> = Promise.resolve();

  const loader = (h: LoaderHooks) => {
    const onProgress = (pr: { file: string; index: number; count: number; fraction: number }) =>
      h.progress((pr.index + pr.fraction) / Math.max(1, pr.count), pr.file, { done: pr.index, count: pr.count });
    loading = (async () => {
      if (followFile) {
        follower = new Follower(db, followFile, {
          onProgress,
          onLoaded: (b) => h.loaded(followNote(followFile, b)),
          onError: (e) => h.loaded(`follow: ${(e as Error).message}`),
        });
        const n = await follower.start();
        h.loaded(followNote(followFile, { records: n, skippedLines: follower.skippedLines, firstSkipped: follower.firstSkipped }, `following ${followFile} (${plural(n, 'record')})`));
      } else {
        const report = o.paths.length ? await loadPaths(db, o.paths, { lenient: o.lenient, manifest: o.manifest, onProgress }) : undefined;
        if (o.receive) receiver = await receiveLive(db, o.receive, h);
        else h.loaded(report?.skippedLines ? `skipped ${plural(report.skippedLines, 'malformed line')}` : undefined);
      }
    })();
    return loading;
  };

  // the splash (src/ui/splash.ts) is on screen: clear it for ink's first frame
  process.stdout.write('\x1b[H\x1b[2J');
  // turned off again by leaveScreen (src/ui/splash.ts)
  if (o.mouse !== false) process.stdout.write(MOUSE_ON);
  let quit = false;
  const app = render(<App db={reader} loader={loader} label={followFile ? 'follow' : o.receive ? 'receive' : undefined} live={followFile !== undefined || o.receive !== undefined} onFatal={(e) => {
    // a load stopped because the user quit is no error
    if (quit) return;
    fatal = e;
    app.unmount();
  }} />, { maxFps: 60, patchConsole: false, exitOnCtrlC: true });
  if (o.stop?.aborted) app.unmount();
  else o.stop?.addEventListener('abort', () => app.unmount(), { once: true });
  try {
    await app.waitUntilExit();
  } finally {
    quit = true;
    await follower?.stop();
    // what was received is flushed (and kept, with --db) before the database closes
    await loading.catch(() => undefined);
    await receiver?.close().catch(() => undefined);
    // quitting mid-load: stop the load before closing the database under it
    db.conn.interrupt();
    await loading.catch(() => undefined);
    await closeReader(reader);
    db.close();
  }
  if (fatal) throw fatal;
}
