/**
 * The response examples of the OpenAPI document (node build.mjs: every example run on a
 * fresh demo in a temp directory, its answer put in the document) name the paths the demo's
 * documents name: a file under the demo root as on the box, never the temp directory.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { documentedPaths, runDemoExamples } from '../../runtime/demo-examples';

const repo = resolve(import.meta.dirname, '../..');
const dist = join(repo, 'dist');
execFileSync(process.execPath, ['build.mjs', '--if-stale'], { cwd: repo, stdio: 'ignore' });

describe('documentedPaths', () => {
  it('maps the demo root to / and the rest of the demo state to var/demo, in every string of an answer', () => {
    const state = '/tmp/ballast-demo-example-AbC123';
    expect(
      documentedPaths(
        {
          resolutions: [{ piece: 'private_key', output: `${state}/root/etc/ballast/tls/server.key` }],
          text: `wrote ${state}/root/etc/x.conf and ${state}/notifications.jsonl`,
          root: `${state}/root`,
          other: `${state}/rootfs/x`,
          n: 3,
          none: null,
        },
        state,
      ),
    ).toEqual({
      resolutions: [{ piece: 'private_key', output: '/etc/ballast/tls/server.key' }],
      text: 'wrote /etc/x.conf and var/demo/notifications.jsonl',
      root: '/',
      other: 'var/demo/rootfs/x',
      n: 3,
      none: null,
    });
  });
});

describe('the OpenAPI document built with the examples answers', () => {
  it('holds no temp path; certificate ingest answers the documented piece paths', async () => {
    // as build.mjs makes dist/openapi.json (without writing it)
    const answers: Record<string, { status: number; body: unknown }[]> = {};
    for (const run of await runDemoExamples(repo, dist)) {
      (answers[run.route.operationId ?? ''] ??= [])[run.index] = { status: run.status, body: run.body };
    }
    const app = (await import(pathToFileURL(join(dist, 'app.mjs')).href)) as {
      openapiDocument(a: typeof answers): unknown;
    };
    const text = JSON.stringify(app.openapiDocument(answers));
    const around = (needle: string) => {
      const out: string[] = [];
      for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1))
        out.push(text.slice(Math.max(0, i - 60), i + 60));
      return out;
    };
    expect(around('ballast-demo-example-')).toEqual([]);
    // the one /tmp path a demo answer may name is a path on the box: klist's ticket cache
    const onBox = (s: string) => /^FILE:\/tmp\/krb5cc_\d+\b/.test(s.slice(s.indexOf('/tmp/') - 5));
    expect(around('/tmp/').filter((s) => !onBox(s))).toEqual([]);
    const ingest = Object.entries(answers).find(([id]) => /ingest/i.test(id) && /certificate/i.test(id))?.[1];
    expect(ingest?.[0]?.body).toMatchObject({
      resolutions: expect.arrayContaining([
        { piece: 'server', output: '/etc/ballast/tls/server.crt' },
        { piece: 'private_key', output: '/etc/ballast/tls/server.key' },
      ]),
    });
  }, 600_000);
});
