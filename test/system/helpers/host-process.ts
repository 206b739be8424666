/**
 * A live host as a child process (`dist/host/cli.mjs serve --config …`), for the kill -9 tests:
 * start it (resolving once it listens, after its start-up recovery), kill it with SIGKILL, read
 * its database while it is down or up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { repo } from '../../helpers/host';

export class HostProcess {
  private child: ChildProcess | undefined;
  /** the admin token the first start printed */
  token = '';
  /** what the current process printed (its start-up recovery says what it rolled back) */
  output = '';

  constructor(
    private readonly configFile: string,
    private readonly stateDir: string,
    /**
     * group: the host runs in a process group of its own and kill9 kills the whole group (the
     * host and the commands it is running), as systemd's default KillMode=control-group does;
     * without it the commands the host started run to their end as orphans.
     */
    private readonly opts: { group?: boolean } = {},
  ) {}

  /** Starts the host; resolves with its URL once it listens. */
  start(): Promise<string> {
    return new Promise((resolve, reject) => {
      const c = spawn(process.execPath, [join(repo, 'dist/host/cli.mjs'), 'serve', '--config', this.configFile], {
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: this.opts.group === true,
      });
      this.child = c;
      this.output = '';
      const timer = setTimeout(() => reject(new Error(`host did not start: ${this.output}`)), 30_000);
      const onData = (d: Buffer) => {
        this.output += d.toString();
        const t = /\n {2}(blt_\S+)\n/.exec(this.output);
        if (t) this.token = t[1];
        const m = /listening on (http:\/\/\S+)\/api\/v2/.exec(this.output);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      };
      c.stdout?.on('data', onData);
      c.stderr?.on('data', onData);
      c.once('exit', (code) => reject(new Error(`host exited ${code}: ${this.output}`)));
    });
  }

  kill9(): Promise<void> {
    const c = this.child;
    // a child that already ended (by a signal too: exitCode stays null then) sends no second exit
    if (!c || c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      c.once('exit', () => resolve());
      if (this.opts.group && c.pid !== undefined) process.kill(-c.pid, 'SIGKILL');
      else c.kill('SIGKILL');
    });
  }

  /** A read-only query of the host's database. */
  query<T>(sql: string): T[] {
    const db = new Database(join(this.stateDir, 'ballast.db'), { readonly: true });
    try {
      return db.prepare(sql).all() as T[];
    } finally {
      db.close();
    }
  }

  /** Intents the journal still holds (0 once a start has recovered). */
  openIntents(): number {
    return this.query<{ n: number }>('SELECT COUNT(*) AS n FROM intents')[0].n;
  }
}
