/**
 * System tier, a running pod set cancelled as a job (#28). The real host process (`cli.mjs
 * serve`, live back end, the real docker-compose for the engine check) runs the set asked with
 * `Prefer: respond-async`; systemctl is a stand-in script (no systemd manager runs here) that
 * logs its argv and blocks on the first `daemon-reload`, after both files were written. The job
 * is cancelled there: the stand-in's process group is stopped, nothing more starts for the
 * request, and the intent journal puts everything back (both files gone, systemd reloaded); the
 * job says what was undone.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { dbFile } from '../../runtime/config';
import { makeTestConfig } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import { HostProcess } from './helpers/host-process';
import { whenFileMatches } from './helpers/when-file';

let host: HostProcess | undefined;
const standInPids: number[] = [];

afterAll(async () => {
  await host?.kill9();
  for (const pid of standInPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

describe('cancel during a pod set', () => {
  it('stops the blocked command, rolls the pod back and says what was undone', async () => {
    if (!existsSync('/usr/bin/docker-compose'))
      throw new Error('needs /usr/bin/docker-compose (apt-get install docker-compose)');
    const dir = privateDir('pod-cancel');
    const log = join(dir, 'systemctl.log');
    const pidFile = join(dir, 'reload.pid');
    const systemctl = join(dir, 'pod-standin-systemctl');
    writeFileSync(
      systemctl,
      `#!/bin/sh\necho "$*" >> ${log}\nif [ "$1" = daemon-reload ] && [ ! -e ${pidFile} ]; then echo $$ > ${pidFile}; exec sleep 600; fi\nexit 0\n`,
      { mode: 0o755 },
    );
    const { config } = makeTestConfig();
    mkdirSync(join(config.paths.fstab, '..'), { recursive: true });
    writeFileSync(config.paths.fstab, 'UUID=0000 /srv/pods ext4 defaults 0 2 # ballast:pod-data\n');
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      stringify({
        stateDir: config.stateDir,
        paths: config.paths,
        listen: { host: '127.0.0.1', port: 0 },
        system: { mode: 'live', binaries: { systemctl } },
        settings: { pod: { composeCommand: ['/usr/bin/docker-compose'] } },
      }),
    );
    const composeFile = join(config.paths.podFiles, 'ballast-pod-site', 'compose.json');
    const unitFile = join(config.paths.podUnitDir, 'ballast-pod-site.service');

    host = new HostProcess(file, config.stateDir);
    const url = await host.start();
    const token = host.token;
    const accepted = await fetch(`${url}/api/v2/pod/site/set`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({
        fileContents: { version: '3.8', services: { a: { image: 'busybox', volumes: ['./data:/data'] } } },
      }),
    });
    expect(accepted.status).toBe(202);
    const id = ((await accepted.json()) as { job: { id: string } }).job.id;
    await whenFileMatches(pidFile, /^\d+\n$/);
    const blocked = Number(readFileSync(pidFile, 'utf8'));
    standInPids.push(blocked);
    expect([existsSync(composeFile), existsSync(unitFile)]).toEqual([true, true]);

    const cancelled = await fetch(`${url}/api/v2/jobs/${id}/cancel`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(cancelled.status).toBe(200);
    const job = (
      (await cancelled.json()) as {
        job: { state: string; undo: { files: string[]; undone: string[][]; failed: unknown[] }; progress: unknown };
      }
    ).job;
    expect(job.state).toBe('cancelled');
    expect(job.undo.files.sort()).toEqual([composeFile, unitFile].sort());
    expect(job.undo.undone).toEqual([[systemctl, 'daemon-reload']]);
    expect(job.undo.failed).toEqual([]);
    expect(job.progress).toMatchObject({ phase: 'write' });
    // the blocked command's process group is gone; the files too; systemd reloaded once more
    expect(() => process.kill(blocked, 0)).toThrow();
    expect([existsSync(composeFile), existsSync(unitFile)]).toEqual([false, false]);
    expect(readFileSync(log, 'utf8')).toBe('daemon-reload\ndaemon-reload\n');
    const db = new Database(dbFile(config), { readonly: true });
    expect(db.prepare('SELECT * FROM intents').all()).toEqual([]);
    db.close();
    // and the pod can be set again
    const again = await fetch(`${url}/api/v2/pod/site/set`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json' },
      body: JSON.stringify({ fileContents: { version: '3.8', services: { a: { image: 'busybox' } } } }),
    });
    expect(again.status).toBe(200);
    await host.kill9();
  }, 90_000);
});
