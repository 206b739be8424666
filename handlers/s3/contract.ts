/** What the S3 routes and the host's s3 area module (runtime/areas/s3.ts) share. */
export { s3Settings, type S3Settings, DEFAULT_SERVER_COMMAND } from './settings';
export { RESOLVE_PATH_OP, resolvePathPayload, type ResolvePathResult } from './resolve-op';
export { UNIT_DIR_KEY, ENV_DIR_KEY } from './names';
export { pendingIntent, settleIntent, type Intent, type Step } from './journal';
export { SETTLE_OP, settlePayload, type SettleResult } from './settle-op';
