/**
 * System tier, kill -9 in the middle of a pod set (#34: one journaled pod op). The real host
 * process (`cli.mjs serve`, live back end, the real docker-compose for the engine check) runs the
 * set; systemctl is a stand-in script (no systemd manager runs here) that logs its argv and
 * blocks on the first `daemon-reload`, after both files were written. The host is killed with
 * SIGKILL there. A new host on the same state finds the intent at start, removes both files,
 * reloads systemd, logs it and records pod.change.rolled_back: no half-made pod is left.
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

describe('kill -9 during a pod set', () => {
  it('the next host start removes the half-made pod', async () => {
    if (!existsSync('/usr/bin/docker-compose'))
      throw new Error('needs /usr/bin/docker-compose (apt-get install docker-compose)');
    const dir = privateDir('pod-kill');
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

    // 1. the first host, killed while `systemctl daemon-reload` runs
    host = new HostProcess(file, config.stateDir);
    const url = await host.start();
    const token = host.token;
    const request = fetch(`${url}/api/v2/pod/site/set`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json' },
      body: JSON.stringify({
        fileContents: { version: '3.8', services: { a: { image: 'busybox', volumes: ['./data:/data'] } } },
      }),
    }).catch((e: unknown) => e);
    await Promise.race([
      whenFileMatches(pidFile, /^\d+\n$/),
      request.then(async (r) => {
        throw new Error(
          `set answered before daemon-reload ran: ${r instanceof Response ? `${r.status} ${await r.text()}` : String(r)}`,
        );
      }),
    ]);
    standInPids.push(Number(readFileSync(pidFile, 'utf8')));
    await host.kill9();
    expect(await request).toBeInstanceOf(Error);
    expect([existsSync(composeFile), existsSync(unitFile)]).toEqual([true, true]);
    const db1 = new Database(dbFile(config), { readonly: true });
    expect(db1.prepare('SELECT area FROM intents').all()).toEqual([{ area: 'pod' }]);
    db1.close();

    // 2. the next start puts it back: both files gone, systemd reloaded
    // the journal is recovered before the host listens: its line is in the output once start resolves
    const url2 = await host.start();
    expect(host.output).toMatch(
      /pod: rolled back a change interrupted at request \S+: files [^"\n]*; 1 command\(s\) undone/,
    );
    expect([existsSync(composeFile), existsSync(unitFile)]).toEqual([false, false]);
    expect(readFileSync(log, 'utf8')).toBe('daemon-reload\ndaemon-reload\n');
    const db2 = new Database(dbFile(config), { readonly: true });
    expect(db2.prepare('SELECT * FROM intents').all()).toEqual([]);
    // the host logs the rollback, then records its event: wait for the row (bounded), not a fixed time
    const rolledBack = () =>
      db2.prepare("SELECT data FROM events WHERE kind = 'pod.change.rolled_back'").all() as { data: string }[];
    for (let i = 0; i < 100 && rolledBack().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    const ev = rolledBack();
    expect(ev.map((e) => (JSON.parse(e.data) as { files: string[] }).files.sort())).toEqual([
      [composeFile, unitFile].sort(),
    ]);
    // the set ran as a job (#28): it ended `interrupted`, with the journal's rollback in it
    const jobs = db2.prepare('SELECT state, route, undo, error FROM jobs').all() as {
      state: string;
      route: string;
      undo: string;
      error: string;
    }[];
    expect(jobs.map((j) => [j.state, j.route])).toEqual([['interrupted', '/api/v2/pod/:name/set']]);
    const undo = JSON.parse(jobs[0].undo) as { files: string[]; undone: string[][]; failed: unknown[] };
    expect(undo.files.sort()).toEqual([composeFile, unitFile].sort());
    expect(undo.undone).toEqual([[systemctl, 'daemon-reload']]);
    expect((JSON.parse(jobs[0].error) as { code: string }).code).toBe('interrupted');
    const listed = await fetch(`${url2}/api/v2/jobs`, { headers: { token } });
    expect(((await listed.json()) as { jobs: { state: string }[] }).jobs.map((j) => j.state)).toEqual(['interrupted']);
    db2.close();
    // and the pod can be set again
    const again = await fetch(`${url2}/api/v2/pod/site/set`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json' },
      body: JSON.stringify({ fileContents: { version: '3.8', services: { a: { image: 'busybox' } } } }),
    });
    expect(again.status).toBe(200);
    await host.kill9();
  }, 90_000);
});
