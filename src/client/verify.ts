/** Receiver-side signature checks, for subscribers written in TypeScript and for `runlens webhooks verify`. */
export { verifyWebhookSignature, verifyStandardWebhook } from '../service/signing.js';
