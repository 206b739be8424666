import type { NotificationSettings } from '../../../../handlers/notification/contract';

/** What every sender needs besides the agent's configuration and the notification. */
export interface SendContext {
  settings: NotificationSettings;
  productName: string;
  /** Trusted CAs for TLS (undefined: Node's defaults); see trust.ts. */
  ca?: string[];
}
