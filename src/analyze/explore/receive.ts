/**
 * `explore --receive`: an OTLP receiver writing into the explorer's model. Screens refresh each time
 * the derived relations are rebuilt (when the stream pauses, and about every second while it goes on).
 */
import { OtlpReceiver, type ReceiverOptions } from '../../ingest/otlp-receiver.js';
import type { Db } from '../../store/db.js';

export interface LiveHooks {
  /** the model changed (screens refresh); `note` is shown in the status line */
  loaded(note?: string): void;
  /** the receiver listens at this address */
  listening?(url: string): void;
}

/** Start receiving; the caller closes the receiver (which flushes what arrived) before the database. */
export async function receiveLive(db: Db, opts: Omit<ReceiverOptions, 'db'>, hooks: LiveHooks): Promise<OtlpReceiver> {
  const note = () => `received ${rx.stats.spans.toLocaleString('en-US')} spans, ${rx.stats.logs.toLocaleString('en-US')} logs` +
    (rx.stats.rejected ? `, ${rx.stats.rejected} rejected` : '');
  const rx: OtlpReceiver = new OtlpReceiver({ ...opts, db, onDerived: () => hooks.loaded(note()), log: (line) => hooks.loaded(line) });
  try {
    await rx.start();
  } catch (e) {
    await rx.close().catch(() => undefined);
    throw e;
  }
  hooks.listening?.(rx.url);
  hooks.loaded(note());
  return rx;
}
