import type { Writable } from 'node:stream';

/**
 * Write with backpressure: resolves when the stream can take more, rejects when it failed (a stream
 * that failed never drains: waiting for 'drain' alone would wait for ever, and Node would end with 0).
 */
export function writeChunk(w: Writable, s: string): Promise<void> | void {
  if (w.errored) return Promise.reject(w.errored);
  if (w.destroyed) return Promise.reject(new Error('the output was closed before everything was written'));
  if (!w.write(s)) return new Promise((res, rej) => {
    const done = (e?: Error | null) => {
      w.off('drain', onDrain);
      w.off('error', onError);
      w.off('close', onClose);
      if (e) rej(e);
      else res();
    };
    const onDrain = () => done();
    const onError = (e: Error) => done(e);
    const onClose = () => done(w.errored ?? new Error('the output was closed before everything was written'));
    w.on('drain', onDrain);
    w.on('error', onError);
    w.on('close', onClose);
  });
}
