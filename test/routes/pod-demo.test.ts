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
