/** Public API of the runlens package. */
export * from './telemetry/enums.js';
export * from './telemetry/status-map.js';
export * from './telemetry/event-types.js';
export { RunlensError, UsageError, InputError, FoundError } from './errors.js';
export * from './produce/index.js';
export { openModel, loadPaths, type LoadReport, type LoadOptions } from './store/load.js';
export { Db } from './store/db.js';
export { OtlpReceiver, type ReceiverOptions } from './ingest/otlp-receiver.js';
export { verifyWebhookSignature, verifyStandardWebhook } from './client/verify.js';
