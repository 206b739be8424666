import * as z from 'zod';
import { healthResult } from './contract';

/** GET /health: the host's report (503 with the same shape when `status` is `down`). */
export const healthAnswer = healthResult;

/** GET /version */
export const versionAnswer = z.object({
  /** the product name the host is configured with */
  name: z.string(),
  /** the host's package version */
  version: z.string(),
  /** the API's version: its routes are under `/api/v2` (or the configured base path) */
  api: z.literal('v2'),
});
