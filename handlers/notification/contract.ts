/** What the notification routes and the host's notification area module share. */
export { TEST_OP, type TestOpPayload, type TestOpResult } from './test-op';
export {
  SECRET_FIELDS,
  agentConfig,
  type AgentType,
  type SmsConfig,
  type SmtpConfig,
  type WebhookConfig,
} from './schemas';
export { isLocalAddress, isLocalHost } from './local-target';
export { openUrl, sealUrlSync, urlSecretValues } from './url-secrets';
