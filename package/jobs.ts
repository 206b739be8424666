/**
 * Waiting for a job (a long route asked with `Prefer: respond-async`, or a 504 that named one):
 * its Server-Sent Events stream read to the end, each progress event handed to `onProgress`,
 * the stream resumed with Last-Event-ID if the connection drops, then the job as it ended.
 */
import type { paths } from './openapi';

export type Job = paths['/api/v2/jobs/{id}']['get']['responses'][200]['content']['application/json']['job'];
export type JobProgress = NonNullable<Job['progress']>;

export interface WaitForJobOptions {
  onProgress?: (progress: JobProgress) => void;
  /** each log line (a command started or ended, its stderr) as it comes */
  onLog?: (line: string) => void;
  signal?: AbortSignal;
  /** reconnections after a dropped stream before giving up (default 5) */
  retries?: number;
}

interface Target {
  /** the API's root as the client reaches it: origin + mount + base path */
  apiUrl: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
}

const FINAL = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

export async function waitForJob(t: Target, id: string, o: WaitForJobOptions = {}): Promise<Job> {
  const url = `${t.apiUrl}/jobs/${encodeURIComponent(id)}`;
  let last = 0;
  let retries = o.retries ?? 5;
  for (;;) {
    let ended = false;
    try {
      const res = await t.fetch(`${url}/events`, {
        headers: { ...t.headers, accept: 'text/event-stream', ...(last ? { 'last-event-id': String(last) } : {}) },
        signal: o.signal,
      });
      if (!res.ok || !res.body) throw new JobWaitError(`GET ${url}/events answered ${res.status}`, res.status);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const e = parseEvent(block);
          if (!e) continue;
          if (e.id !== undefined) last = e.id;
          if (e.type === 'progress') o.onProgress?.(e.data as JobProgress);
          else if (e.type === 'log') o.onLog?.(String((e.data as { line?: unknown }).line ?? ''));
          else if (e.type === 'state' && FINAL.has(String((e.data as { state?: unknown }).state))) ended = true;
        }
      }
    } catch (e) {
      if (e instanceof JobWaitError && e.status >= 400 && e.status < 500) throw e;
      if (o.signal?.aborted || retries-- <= 0) throw e;
      continue;
    }
    if (!ended && retries-- > 0) continue;
    const res = await t.fetch(url, { headers: t.headers, signal: o.signal });
    if (!res.ok) throw new JobWaitError(`GET ${url} answered ${res.status}`, res.status);
    return ((await res.json()) as { job: Job }).job;
  }
}

export class JobWaitError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'JobWaitError';
  }
}

function parseEvent(block: string): { id?: number; type: string; data: unknown } | null {
  let id: number | undefined;
  let type = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = Number(value);
    else if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return null;
  try {
    return { id, type, data: JSON.parse(data.join('\n')) as unknown };
  } catch {
    return null;
  }
}
