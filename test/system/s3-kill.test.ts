/**
 * System tier, kill -9 in the middle of an S3 create: the real host process (`cli.mjs serve`,
 * live back end) runs the create; systemctl is a stand-in script (no systemd manager runs here)
 * that logs its argv and blocks on `start`. The host is killed with SIGKILL while `start`
 * runs, after both files were written and the unit enabled. A new host on the same state finds
 * the intent row at start, rolls the create back (stop, disable, both files removed,
 * daemon-reload), logs it and records s3.share.recovered; the exported directory is untouched.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { dbFile } from '../../runtime/config';
import { distDir, makeTestConfig, repo } from '../helpers/host';
import { whenFileMatches } from './helpers/when-file';
import { privateDir } from '../helpers/tmp';

const cli = join(distDir, 'host', 'cli.mjs');
const children: ChildProcess[] = [];
const standInPids: number[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const pid of standInPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

interface Running {
  child: ChildProcess;
  output: () => string;
  /** resolves with the output once it matches */
  waitFor: (re: RegExp) => Promise<RegExpMatchArray>;
  exited: Promise<void>;
}

function startCli(configFile: string): Running {
  const child = spawn(process.execPath, [cli, 'serve', '--config', configFile], {
    cwd: repo,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  const waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void; reject: (e: Error) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const m = out.match(w.re);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  child.stdout?.on('data', (d: Buffer) => ((out += d.toString()), check()));
  child.stderr?.on('data', (d: Buffer) => ((out += d.toString()), check()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  void exited.then(() => {
    for (const w of waiters.splice(0)) w.reject(new Error(`host exited before printing ${w.re}; output:\n${out}`));
  });
  return {
    child,
    output: () => out,
    exited,
    waitFor: (re) =>
      new Promise((resolve, reject) => {
        waiters.push({ re, resolve, reject });
        check();
      }),
  };
}

function freePort(): number {
  const out = execFileSync('/usr/bin/ss', ['-Hltn'], { encoding: 'utf8' });
  for (let p = 19500; p < 20000; p++) if (!out.includes(`:${p} `)) return p;
  throw new Error('no free port in 19500-19999');
}

/** Resolves when `file` exists and its text matches `re` (fs.watch on its directory). */

describe('kill -9 during an S3 create', () => {
  it('the next host start rolls the half-made share back', async () => {
    const dir = privateDir('s3-kill');
    const data = join(dir, 'data');
    mkdirSync(join(data, 'media'), { recursive: true });
    writeFileSync(join(data, 'media', 'object.bin'), 'keep me');
    const log = join(dir, 'systemctl.log');
    const pidFile = join(dir, 'start.pid');
    const systemctl = join(dir, 's3-standin-systemctl');
    writeFileSync(
      systemctl,
      `#!/bin/sh\necho "$*" >> ${log}\nif [ "$1" = start ]; then echo $$ > ${pidFile}; exec sleep 600; fi\nexit 0\n`,
      { mode: 0o755 },
    );
    const { config } = makeTestConfig();
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      stringify({
        stateDir: config.stateDir,
        paths: config.paths,
        listen: { host: '127.0.0.1', port: 0 },
        system: { mode: 'live', binaries: { systemctl } },
        settings: { s3: { shareRoots: [data] } },
      }),
    );
    const unitFile = join(config.paths.s3UnitDir, 's3-media.service');
    const envFile = join(config.paths.s3EnvDir, 'media.env');

    // 1. the first host, killed while `systemctl start` runs
    const first = startCli(file);
    const token = (await first.waitFor(/^ {2}(blt_\S+)$/m))[1];
    const url = (await first.waitFor(/listening on (http:\/\/\S+)\/api\/v2/))[1];
    const request = fetch(`${url}/api/v2/s3/create`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json' },
      body: JSON.stringify({
        shareName: 'media',
        path: join(data, 'media'),
        port: String(freePort()),
        rootUser: 'media-admin',
        rootPassword: 'Media-Secret-2026',
      }),
    }).catch((e: unknown) => e);
    await Promise.race([
      whenFileMatches(pidFile, /^\d+\n$/),
      request.then(async (r) => {
        throw new Error(
          `create answered before systemctl start ran: ${r instanceof Response ? `${r.status} ${await r.text()}` : String(r)}`,
        );
      }),
    ]);
    standInPids.push(Number(readFileSync(pidFile, 'utf8')));
    first.child.kill('SIGKILL');
    await first.exited;
    expect(await request).toBeInstanceOf(Error);
    expect(readFileSync(log, 'utf8')).toBe('daemon-reload\nenable -- s3-media.service\nstart -- s3-media.service\n');
    expect([existsSync(unitFile), existsSync(envFile)]).toEqual([true, true]);
    const db1 = new Database(dbFile(config), { readonly: true });
    expect(db1.prepare('SELECT share_name, op FROM s3_intents').all()).toEqual([{ share_name: 'media', op: 'create' }]);
    db1.close();

    // 2. the next start settles it
    const second = startCli(file);
    // a warning line of the host's log (JSON by default)
    await second.waitFor(/s3: unfinished create of share media \(request [^)]+\) rolled back: /);
    expect([existsSync(unitFile), existsSync(envFile)]).toEqual([false, false]);
    expect(readFileSync(log, 'utf8')).toBe(
      'daemon-reload\nenable -- s3-media.service\nstart -- s3-media.service\nstop -- s3-media.service\ndisable -- s3-media.service\ndaemon-reload\n',
    );
    expect(readFileSync(join(data, 'media', 'object.bin'), 'utf8')).toBe('keep me');
    const db2 = new Database(dbFile(config), { readonly: true });
    expect(db2.prepare('SELECT * FROM s3_intents').all()).toEqual([]);
    const ev = db2.prepare("SELECT data FROM events WHERE kind = 's3.share.recovered'").all() as { data: string }[];
    expect(ev.map((e) => JSON.parse(e.data) as unknown)).toEqual([
      { shareName: 'media', op: 'create', outcome: 'rolled back', complete: true },
    ]);
    db2.close();
    expect(second.output()).not.toContain('Media-Secret-2026');
    second.child.kill('SIGTERM');
    await second.exited;
  }, 60_000);
});
