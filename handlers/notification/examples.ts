import type { ExampleRequest } from '../core/route';

/**
 * The request the by-id examples run first on a fresh demo (`before`), so that agent 1 exists: a
 * disabled webhook (disabled: the demo's events are not delivered to it).
 */
export const CREATE_AGENT_1: ExampleRequest = {
  method: 'POST',
  path: '/notification/agent/create',
  body: { type: 'webhook', enabled: false, json: { url: 'https://hooks.example.com/ballast' } },
};
