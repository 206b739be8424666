/** Request shapes of the jobs routes. */
import * as z from 'zod';
import { jobState } from './contract';

const jobId = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be a job id (a UUID)')
  .describe('the job id (`job.id`, the last segment of the 202 answer’s Location)');

export const jobParams = z.strictObject({ id: jobId });

export const listJobsQuery = z.strictObject({
  state: jobState.optional().describe('only jobs in this state'),
  area: z
    .string()
    .regex(/^[a-z][a-z0-9]*$/)
    .optional()
    .describe('only jobs of this area’s routes (`fs`, `pod`, `dfs`…)'),
  mine: z
    .enum(['true', 'false'])
    .optional()
    .describe('`true`: only this token’s jobs (a `*` token sees every job otherwise)'),
  limit: z.coerce.number().int().min(1).max(500).default(50).describe('jobs per page, newest first'),
  before: jobId.optional().describe('the page after this job (the previous answer’s `next`)'),
});

export const jobEventsQuery = z.strictObject({
  after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('replay from after this event number (the SSE `id:`); the `Last-Event-ID` header does the same'),
});
