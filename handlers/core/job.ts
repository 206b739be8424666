/**
 * A job as the API shows it, the progress a long route reports, the events of a job's stream:
 * what the pipeline's job layer (runtime/jobs/), the jobs routes (handlers/jobs/) and the long
 * routes share. Core, not an area: every long route of every area runs as one.
 */
import * as z from 'zod';

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted'] as const;
export const jobState = z.enum(JOB_STATES);
export type JobState = z.output<typeof jobState>;
/** The states a job ends in; it never leaves one. */
export const FINAL_STATES: ReadonlySet<JobState> = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

/**
 * What a long route says about where it is, as far as it can tell truthfully: its phase (one of
 * the phases its contract declares), its step of the route's own steps, and/or a count of the
 * tool's own units (files hashed, entries walked, bytes) with the total when it is known.
 */
export const jobProgress = z.strictObject({
  phase: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,39}$/)
    .optional(),
  step: z.number().int().min(0).max(1_000_000).optional(),
  steps: z.number().int().min(1).max(1_000_000).optional(),
  done: z.number().min(0).optional(),
  total: z.number().min(0).optional(),
  /** 0–100, computed from done/total (or step/steps) when the route does not give it */
  percent: z.number().min(0).max(100).optional(),
  message: z.string().max(300).optional(),
});
export type JobProgress = z.output<typeof jobProgress>;

/** The rollback the host ran for a cancelled, timed-out or interrupted job (the intent journal). */
export const jobUndo = z.strictObject({
  files: z.array(z.string()),
  undone: z.array(z.array(z.string())),
  failed: z.array(z.strictObject({ step: z.string(), error: z.string() })),
});
export type JobUndo = z.output<typeof jobUndo>;

export const jobError = z.looseObject({ code: z.string(), message: z.string() });

export const job = z.strictObject({
  id: z.string(),
  /** the route, as declared: `POST /api/v2/fs/make_filesystem` */
  route: z.string(),
  method: z.string(),
  /** the path the request asked for */
  path: z.string(),
  area: z.string(),
  /** the requester's token id (never its secret) */
  tokenId: z.string().nullable(),
  requestId: z.string(),
  state: jobState,
  progress: jobProgress.nullable(),
  /** the route's own HTTP status, once it answered */
  status: z.number().int().nullable(),
  /** the route's own answer (2xx), when it is at most `resultInlineBytes`; else see `resultBytes` */
  result: z.unknown().optional(),
  /** the answer's size; the whole answer is at links.result */
  resultBytes: z.number().int().nullable(),
  /** the route's own error answer (4xx/5xx), or why the job stopped */
  error: jobError.nullable(),
  undo: jobUndo.nullable(),
  /** the job's time budget (the route's declared limit) */
  budgetS: z.number(),
  createdAt: z.iso.datetime(),
  startedAt: z.iso.datetime().nullable(),
  endedAt: z.iso.datetime().nullable(),
  durationMs: z.number().int().nullable(),
  /** the newest lines of the job's log: the commands run, their exit codes and stderr (secrets masked) */
  log: z.array(z.string()),
  links: z.strictObject({ self: z.string(), events: z.string(), cancel: z.string(), result: z.string() }),
});
export type Job = z.output<typeof job>;

export const JOB_EVENT_TYPES = ['progress', 'log', 'state'] as const;
export const jobEvent = z.strictObject({
  seq: z.number().int().min(1),
  type: z.enum(JOB_EVENT_TYPES),
  at: z.number().int(),
  data: z.record(z.string(), z.unknown()),
});
export type JobEvent = z.output<typeof jobEvent>;
