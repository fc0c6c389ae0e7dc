import type { Clock } from '../clock.js';
import type { Dispatcher } from '../dispatcher.js';
import type { JobRunner } from '../runner.js';
import type { HostResolver } from '../ssrf.js';
import type { Store } from '../store/types.js';

/** What route handlers share. */
export interface ServiceContext {
  store: Store;
  clock: Clock;
  dispatcher: Dispatcher;
  runner: JobRunner;
  stepCommands: readonly string[];
  allowPrivateTargets: boolean;
  resolveHost: HostResolver;
}
