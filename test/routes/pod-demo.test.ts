/**
 * The demo appliance (npm start) answers every example of every pod route with its documented
 * status, each route on a fresh demo, and every 200 answer parses with the route's schema.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { examplePath } from '../../runtime/demo-examples';
import { makeDemoHost } from '../helpers/host';
import { POD_ROUTES } from './pod-helpers';

describe('every pod route example on a fresh demo', () => {
  for (const r of POD_ROUTES) {
    it(`${r.meta.method} ${r.meta.path}`, async () => {
      expect(r.meta.examples?.length ?? 0).toBeGreaterThan(0);
      const d = await makeDemoHost({ routes: POD_ROUTES });
      try {
        for (const ex of r.meta.examples ?? []) {
          const res = await d.call(r.meta.method, examplePath(r.meta.path, ex), {
            body: r.meta.method === 'GET' ? undefined : (ex.body ?? {}),
          });
          const json = res.json;
          expect([ex.summary, res.status, res.status >= 400 ? json : 'ok']).toEqual([
            ex.summary,
            ex.status ?? 200,
            res.status >= 400 ? json : 'ok',
          ]);
          if (res.status === 200) expect(r.schemas.response.safeParse(json).success).toBe(true);
        }
      } finally {
        await d.close();
      }
    });
  }

  it('a pod:read token cannot stall or stop the host with hostile YAML on POST /pod/{name}/test', async () => {
    const d = await makeDemoHost({ routes: POD_ROUTES });
    try {
      const token = await d.token(['pod:read']);
      const hostile = [
        `${'? '.repeat(400)}x`, // collection keys: 46 s of blocked event loop before
        '['.repeat(10_000), // twice in a row aborted Node 20 before
        '['.repeat(10_000),
        `${'- '.repeat(3000)}x`,
      ];
      const answers = await Promise.all(
        hostile.map((fileContents) => d.call('POST', '/api/v2/pod/web/test', { body: { fileContents }, token })),
      );
      expect(answers.map((r) => [r.status, (r.json as { error: { issues: unknown[] } }).error.issues])).toEqual([
        [
          400,
          [
            {
              path: 'body.fileContents',
              message:
                'not usable YAML (line 1, column 3): a mapping key must be a plain or quoted string, not a collection',
            },
          ],
        ],
        ...[0, 1].map(() => [
          400,
          [
            {
              path: 'body.fileContents',
              message: 'not usable YAML (line 1, column 65): collections nested more than 64 deep',
            },
          ],
        ]),
        [
          400,
          [
            {
              path: 'body.fileContents',
              message: 'not usable YAML (line 1, column 129): collections nested more than 64 deep',
            },
          ],
        ],
      ]);
      const ok = await d.call('POST', '/api/v2/pod/web/test', {
        body: { fileContents: 'version: "3.8"\nservices:\n  web:\n    image: busybox\n' },
        token,
      });
      expect([ok.status, (ok.json as { data: unknown }).data]).toEqual([
        200,
        { version: '3.8', services: { web: { image: 'busybox' } } },
      ]);
    } finally {
      await d.close();
    }
  });

  it('shows the demo pods, their states and the recipes', async () => {
    const d = await makeDemoHost({ routes: POD_ROUTES });
    try {
      const get = async (p: string) => (await d.call('GET', `/api/v2${p}`)).json;
      expect(await get('/pod')).toEqual([
        { name: 'ballast-pod-backup', service: { id: 'ballast-pod-backup.service', state: 'disabled', locked: false } },
        { name: 'ballast-pod-web', service: { id: 'ballast-pod-web.service', state: 'online', locked: false } },
      ]);
      expect(await get('/pod/suggested')).toEqual(['web-server', 's3-gateway', 'metrics-exporter']);
      expect(await get('/pod/web/inspect')).toEqual({
        name: 'ballast-pod-web',
        container_status: 'running\nballast-pod-web-web web running (Up 7 hours) 0.0.0.0:8081->80/tcp :::8081->80/tcp',
        running_processes: expect.stringMatching(/^SERVICE {3}# {3}UID/),
      });
      const cfg = (await get('/pod/config')) as { podDataMount: unknown };
      expect(cfg.podDataMount).toEqual({
        source: 'UUID=3e6be9de-8139-11d1-9106-a43f08d823a6',
        mountpoint: '/srv/pods',
        type: 'xfs',
        options: { rw: true, mand: false, noatime: true, xattr: false, posixacl: false },
        fs_freq: 0,
        fs_passno: 2,
      });
      const log = (await get('/pod/web/log?lines=50')) as string;
      expect(log.split('\n')[0]).toMatch(/Starting ballast-pod-web\.service/);
      expect(readFileSync(join(d.root, 'etc/fstab'), 'utf8')).toContain('# ballast:pod-data');
    } finally {
      await d.close();
    }
  });
});
