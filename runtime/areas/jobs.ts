import { hasPermission } from '../../handlers/core/auth';
import {
  JOBS_OPS,
  jobEventsPayload,
  jobIdPayload,
  listJobsPayload,
  type Job,
  type JobEventsResult,
  type JobResult,
  type JobViewer,
} from '../../handlers/jobs/contract';
import type { JobRegistry } from '../jobs/registry';
import { payloadOf } from '../system/host-op';
import { SystemRefusal } from '../system/types';
import { defineArea } from './types';

/** A token sees its own jobs with their area's read permission; `*` sees every job. */
export function canSee(job: Pick<Job, 'tokenId' | 'area'>, viewer: JobViewer): boolean {
  if (viewer.permissions.includes('*')) return true;
  return job.tokenId === viewer.tokenId && hasPermission(viewer.permissions, `${job.area}:read`);
}

/** …and cancels its own with the permission that ran them (`<area>:manage`); `*` any. */
export function canCancel(job: Pick<Job, 'tokenId' | 'area'>, viewer: JobViewer): boolean {
  if (viewer.permissions.includes('*')) return true;
  return job.tokenId === viewer.tokenId && hasPermission(viewer.permissions, `${job.area}:manage`);
}

function visibleJob(registry: JobRegistry, id: string, viewer: JobViewer): Job {
  const job = registry.get(id);
  // another token's job is as unknown as one that never was
  if (!job || !canSee(job, viewer)) throw new SystemRefusal('not_found', `no job ${id}`);
  return job;
}

/**
 * The jobs routes' host side (the registry itself is the host's: runtime/jobs/). No paths, no
 * commands: every op reads or cancels rows of the registry for the token the route names.
 */
export default defineArea({
  name: 'jobs',
  setup: (host) => {
    const { registry } = host.jobs;
    return {
      ops: {
        [JOBS_OPS.list]: async (p) => {
          const q = payloadOf(listJobsPayload, JOBS_OPS.list, p);
          const all = q.viewer.permissions.includes('*') && q.mine !== true;
          const beforeSeq = q.before === undefined ? undefined : registry.seqOf(q.before);
          if (q.before !== undefined && beforeSeq === undefined)
            throw new SystemRefusal('bad_request', `before: no job ${q.before}`);
          // one page of what this token may see: read on until the page is full or rows run out
          const out: Job[] = [];
          let cursor = beforeSeq;
          for (;;) {
            const rows = registry.list({
              state: q.state,
              area: q.area,
              tokenId: all ? undefined : q.viewer.tokenId,
              limit: q.limit + 1,
              beforeSeq: cursor,
            });
            for (const j of rows) if (canSee(j, q.viewer)) out.push(j);
            if (rows.length <= q.limit || out.length > q.limit) break;
            cursor = registry.seqOf(rows[rows.length - 1].id);
          }
          const page = out.slice(0, q.limit);
          return { jobs: page, next: out.length > q.limit ? page[page.length - 1].id : null };
        },
        [JOBS_OPS.get]: async (p) => {
          const q = payloadOf(jobIdPayload, JOBS_OPS.get, p);
          return { job: visibleJob(registry, q.id, q.viewer) };
        },
        [JOBS_OPS.result]: async (p): Promise<JobResult> => {
          const q = payloadOf(jobIdPayload, JOBS_OPS.result, p);
          const job = visibleJob(registry, q.id, q.viewer);
          const r = registry.resultOf(q.id);
          if (!r || r.status >= 400)
            throw new SystemRefusal(
              'not_found',
              `job ${q.id} has no answer (${job.state}${job.error ? `: ${job.error.message}` : ''})`,
            );
          return { status: r.status, contentType: 'application/json; charset=utf-8', text: r.text };
        },
        [JOBS_OPS.events]: async (p): Promise<JobEventsResult> => {
          const q = payloadOf(jobEventsPayload, JOBS_OPS.events, p);
          visibleJob(registry, q.id, q.viewer);
          let events = registry.events(q.id, q.after);
          if (events.length === 0 && registry.isRunning(q.id)) {
            await registry.waitForEvent(q.id, q.waitMs);
            events = registry.events(q.id, q.after);
          }
          // read and checked in one turn: a job that is not running has written its last event
          return { events, ended: !registry.isRunning(q.id) };
        },
        [JOBS_OPS.cancel]: async (p) => {
          const q = payloadOf(jobIdPayload, JOBS_OPS.cancel, p);
          const job = visibleJob(registry, q.id, q.viewer);
          if (!canCancel(job, q.viewer))
            throw new SystemRefusal('forbidden', `token lacks permission ${job.area}:manage to cancel job ${q.id}`);
          const was = await host.jobs.cancel(q.id, `cancelled by token ${q.viewer.tokenId}`);
          if (!was) throw new SystemRefusal('conflict', `job ${q.id} is not running (${job.state})`);
          return { job: registry.get(q.id) };
        },
      },
    };
  },
});
