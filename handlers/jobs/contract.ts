/**
 * What the jobs routes and the host's jobs area share: who asks, and the host ops. The job's own
 * shapes are the pipeline's (handlers/core/job.ts).
 */
import * as z from 'zod';
import { jobEvent, jobState } from '../core/job';

export {
  FINAL_STATES,
  JOB_STATES,
  job,
  jobEvent,
  jobProgress,
  jobState,
  type Job,
  type JobEvent,
  type JobProgress,
  type JobState,
  type JobUndo,
} from '../core/job';

/** Who asks (the route passes its principal): own jobs with the route's read permission; `*` all. */
export const jobViewer = z.strictObject({ tokenId: z.string(), permissions: z.array(z.string()) });
export type JobViewer = z.output<typeof jobViewer>;

export const JOBS_OPS = {
  list: 'jobs/list',
  get: 'jobs/get',
  result: 'jobs/result',
  events: 'jobs/events',
  cancel: 'jobs/cancel',
} as const;

export const listJobsPayload = z.strictObject({
  viewer: jobViewer,
  state: jobState.optional(),
  area: z.string().optional(),
  mine: z.boolean().optional(),
  limit: z.number().int().min(1).max(500),
  /** jobs created before this one (the cursor of the previous page) */
  before: z.string().optional(),
});
export const jobIdPayload = z.strictObject({ viewer: jobViewer, id: z.string() });
export const jobEventsPayload = z.strictObject({
  viewer: jobViewer,
  id: z.string(),
  after: z.number().int().min(0),
  /** how long to wait for an event when there is none yet */
  waitMs: z.number().int().min(0).max(30_000),
});
export const jobEventsResult = z.strictObject({ events: z.array(jobEvent), ended: z.boolean() });
export type JobEventsResult = z.output<typeof jobEventsResult>;
export const jobResult = z.strictObject({ status: z.number().int(), contentType: z.string(), text: z.string() });
export type JobResult = z.output<typeof jobResult>;
