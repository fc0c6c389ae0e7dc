/** Injectable time source: the dispatcher, archival and retention read time only through a Clock. */
export interface Clock {
  /** milliseconds since the epoch */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand (archival after 7 days, log retention) without waiting. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.now()) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}

/** Timestamps in API objects are strings of digits: epoch microseconds, as the hosted samples show. */
export const toMicros = (ms: number): number => Math.round(ms * 1000);
export const microsString = (us: number | null | undefined): string | undefined =>
  us === null || us === undefined ? undefined : String(Math.trunc(us));
/** ISO 8601 UTC with fractional seconds (event timestamp) and with whole seconds (run times). */
export const isoFractional = (ms: number): string => new Date(ms).toISOString();
export const isoSeconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
