/** Public API of the runlens package. */
export * from './telemetry/enums.js';
export * from './telemetry/status-map.js';
export * from './telemetry/event-types.js';
export { RunlensError, UsageError, InputError, FoundError } from './errors.js';
export * from './produce/index.js';
