/**
 * The keys area's host operations (registered through runtime/areas/keys.ts):
 *   keys/read              ~/.ssh/authorized_keys or ~/.ssh/id_ed25519.pub of a user
 *   keys/write-authorized  compare-and-swap atomic rewrite of ~/.ssh/authorized_keys
 *   keys/generate          a new ed25519 pair with ssh-keygen run as the user
 *
 * Every op first resolves the user through the user database (`getent passwd -- NAME`, run
 * through the SYSTEM back end, so it is audited and the demo replays it), checks the user may be
 * named (settings.keys.apiUser, or a member of settings.keys.group), and that the home resolves
 * (realpath) under settings.keys.homeRoots, with `~/.ssh` outside every other area's and the
 * host's managed paths. `~/.ssh` and the key files are refused when they are symlinks or special
 * files. Audit rows name the user and the file, never a key or file content.
 */
import { constants, promises as fsp, type Stats } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  AUTHORIZED_KEYS,
  GENERATE_OP,
  KEY_FILE,
  READ_OP,
  WRITE_OP,
  generatePayload,
  parseGroup,
  parsePasswd,
  readPayload,
  writePayload,
  type GenerateResult,
  type KeysSettings,
  type ReadResult,
  type WriteResult,
} from '../../../handlers/keys/contract';
import { withLock } from '../../../handlers/core/lock';
import { isUnder } from '../../../handlers/core/paths';
import type { ExecResult } from '../../../handlers/core/system';
import type { SqliteDb } from '../../db/database';
import { isErrno } from '../../system/files';
import type { HostOp, SystemService } from '../../system/service';
import { SystemRefusal } from '../../system/types';
import { payloadOf } from '../../system/host-op';
import { opAudit } from '../../db/audit';

export interface KeysOpsOptions {
  settings: KeysSettings;
  db: SqliteDb;
  system: SystemService;
  /** allow-listed binaries (getent, runuser, sshKeygen) */
  bin: Record<string, string>;
  /** the back end replays recorded commands (the demo): ssh-keygen writes nothing */
  replay: boolean;
  /** refuses a real path another area or the host manages (AreaHost.checkOwner, kind keys.home) */
  checkOwner?: (real: string, o: { show: (p: string) => string }) => void;
}

interface User {
  name: string;
  uid: number;
  gid: number;
  /** real path of the home (symlinks resolved, under a home root) */
  home: string;
  /** the home as the user database names it */
  shownHome: string;
}

async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await fsp.lstat(p);
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return null;
    throw e;
  }
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export function keysOps(o: KeysOpsOptions): Record<string, HostOp> {
  const s = o.settings;
  const audit = opAudit(o.db);
  const commentHost = s.commentHost ?? hostname();

  async function exec(argv: string[], requestId: string | undefined, timeoutMs?: number): Promise<ExecResult> {
    return (await o.system.handle('exec', { argv, timeoutMs }, requestId)) as ExecResult;
  }

  async function rootsReal(): Promise<string[]> {
    const out: string[] = [];
    for (const r of s.homeRoots) {
      try {
        out.push(await fsp.realpath(r));
      } catch {
        // a root that does not exist contains nothing
      }
    }
    return out;
  }

  async function lookup(kind: 'passwd' | 'group', name: string, requestId: string | undefined): Promise<string | null> {
    const argv = [o.bin.getent, kind, '--', name];
    const r = await exec(argv, requestId);
    if (r.code === 2) return null; // getent: the key is not in the database
    if (r.code !== 0 || r.timedOut)
      throw new SystemRefusal(
        'command_failed',
        `getent ${kind} ${name} failed (exit ${r.code})${r.stderr.trim() ? `: ${r.stderr.trim().split('\n')[0]}` : ''}`,
      );
    return r.stdout;
  }

  /** The user, if it exists, may be named, and has a home under a home root. */
  async function resolveUser(requested: string | undefined, requestId: string | undefined): Promise<User> {
    const name = requested ?? s.apiUser;
    const out = await lookup('passwd', name, requestId);
    if (out === null) throw new SystemRefusal('not_found', `no user ${name} in the user database`);
    const pw = parsePasswd(out);
    if (pw.name !== name) throw new SystemRefusal('bad_gateway', `getent passwd ${name} answered for ${pw.name}`);
    if (name !== s.apiUser) {
      const g = s.group === null ? null : await lookup('group', s.group, requestId);
      const group = g === null ? null : parseGroup(g);
      if (!group || !(group.members.includes(name) || group.gid === pw.gid)) {
        throw new SystemRefusal(
          'forbidden',
          `the keys of ${name} are not managed here: only ${s.apiUser}${s.group ? ` and members of group ${s.group}` : ''} (settings.keys)`,
        );
      }
    }
    const shown = join(s.userRoot, pw.home);
    let home: string;
    try {
      home = await fsp.realpath(shown);
    } catch (e) {
      if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR'))
        throw new SystemRefusal('not_found', `the home ${pw.home} of ${name} does not exist`);
      throw e;
    }
    if (!(await rootsReal()).some((r) => isUnder(home, r))) {
      throw new SystemRefusal(
        'forbidden',
        `the home ${pw.home} of ${name} is outside the home roots (settings.keys.homeRoots)`,
      );
    }
    if (!(await fsp.stat(home)).isDirectory())
      throw new SystemRefusal('forbidden', `the home ${pw.home} of ${name} is not a directory`);
    // what the ops touch is ~/.ssh: never inside another area's or the host's paths (a service
    // user whose home is the state directory)
    o.checkOwner?.(join(home, '.ssh'), {
      show: (p) => (isUnder(p, home) ? join(pw.home, p.slice(home.length)) : p),
    });
    return { name, uid: pw.uid, gid: pw.gid, home, shownHome: pw.home };
  }

  /** ~/.ssh's lstat, or null when absent; refuses a symlink or anything but a directory. */
  async function sshDirStat(u: User): Promise<Stats | null> {
    const st = await lstatOrNull(join(u.home, '.ssh'));
    if (st?.isSymbolicLink())
      throw new SystemRefusal('forbidden', `${join(u.shownHome, '.ssh')} is a symlink: refused`);
    if (st && !st.isDirectory())
      throw new SystemRefusal('forbidden', `${join(u.shownHome, '.ssh')} is not a directory`);
    return st;
  }

  /** ~/.ssh, created 0700 and owned by the user when absent. */
  async function ensureSshDir(u: User): Promise<Stats> {
    const dir = join(u.home, '.ssh');
    const st = await sshDirStat(u);
    if (st) return st;
    try {
      await fsp.mkdir(dir, { mode: 0o700 });
    } catch (e) {
      if (!isErrno(e, 'EEXIST')) throw e;
    }
    let fh;
    try {
      fh = await fsp.open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (e) {
      // replaced by a link or a file between the mkdir and the open
      if (isErrno(e, 'ELOOP') || isErrno(e, 'ENOTDIR'))
        throw new SystemRefusal('forbidden', `${join(u.shownHome, '.ssh')} is not a directory: refused`);
      throw e;
    }
    try {
      await fh.chmod(0o700);
      if (s.setOwner) await fh.chown(u.uid, u.gid);
    } finally {
      await fh.close();
    }
    await fsyncDir(u.home);
    const now = await sshDirStat(u);
    if (!now) throw new SystemRefusal('conflict', `${join(u.shownHome, '.ssh')} vanished while it was created`);
    return now;
  }

  /** A key file's bytes, or null when absent; a symlink, special file or oversize file is refused. */
  async function readKeyFile(path: string, shown: string): Promise<{ bytes: Buffer; stat: Stats } | null> {
    const st = await lstatOrNull(path);
    if (!st) return null;
    if (st.isSymbolicLink()) throw new SystemRefusal('forbidden', `${shown} is a symlink: refused`);
    if (!st.isFile()) throw new SystemRefusal('forbidden', `${shown} is not a regular file: refused`);
    if (st.size > s.maxFileBytes)
      throw new SystemRefusal('payload_too_large', `${shown} is larger than ${s.maxFileBytes} bytes`);
    let fh;
    try {
      fh = await fsp.open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return null;
      if (isErrno(e, 'ELOOP')) throw new SystemRefusal('forbidden', `${shown} is a symlink: refused`);
      throw e;
    }
    try {
      const fst = await fh.stat();
      if (fst.ino !== st.ino || fst.dev !== st.dev || !fst.isFile())
        throw new SystemRefusal('conflict', `${shown} changed while it was opened`);
      const buf = Buffer.alloc(Math.min(fst.size, s.maxFileBytes) + 1);
      let n = 0;
      for (;;) {
        const r = await fh.read(buf, n, buf.length - n, n);
        if (r.bytesRead === 0 || (n += r.bytesRead) === buf.length) break;
      }
      if (n > s.maxFileBytes)
        throw new SystemRefusal('payload_too_large', `${shown} is larger than ${s.maxFileBytes} bytes`);
      return { bytes: buf.subarray(0, n), stat: fst };
    } finally {
      await fh.close();
    }
  }

  function text(bytes: Buffer, shown: string): string {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new SystemRefusal('conflict', `${shown} is not UTF-8 text; it is left as it is`);
    }
  }

  /** Unlink a regular file we own the name of (never follows a link); absent is fine. */
  async function unlinkIfFile(path: string): Promise<void> {
    const st = await lstatOrNull(path);
    if (st && (st.isFile() || st.isSymbolicLink())) await fsp.unlink(path);
  }

  return {
    [READ_OP]: async (payload, requestId): Promise<ReadResult> => {
      const req = payloadOf(readPayload, READ_OP, payload);
      const u = await resolveUser(req.user, requestId);
      const name = req.file === 'authorized_keys' ? AUTHORIZED_KEYS : `${KEY_FILE}.pub`;
      const shown = join(u.shownHome, '.ssh', name);
      const dir = await sshDirStat(u);
      const f = dir ? await readKeyFile(join(u.home, '.ssh', name), shown) : null;
      audit({
        kind: READ_OP,
        requestId,
        argv: [shown],
        note: `user ${u.name}: ${f ? `${f.bytes.length} bytes` : 'absent'}`,
      });
      return {
        user: u.name,
        path: shown,
        content: f ? text(f.bytes, shown) : null,
        version: f ? sha256(f.bytes) : null,
      };
    },

    [WRITE_OP]: async (payload, requestId): Promise<WriteResult> => {
      const req = payloadOf(writePayload, WRITE_OP, payload);
      const u = await resolveUser(req.user, requestId);
      const bytes = Buffer.from(req.content, 'utf8');
      const shown = join(u.shownHome, '.ssh', AUTHORIZED_KEYS);
      if (bytes.length > s.maxFileBytes)
        throw new SystemRefusal('payload_too_large', `${shown} would be larger than ${s.maxFileBytes} bytes`);
      const dir = join(u.home, '.ssh');
      return withLock(`keys-op:${dir}`, async () => {
        const dirStat = await ensureSshDir(u);
        const file = join(dir, AUTHORIZED_KEYS);
        const current = await readKeyFile(file, shown);
        const version = current ? sha256(current.bytes) : null;
        if (version !== req.expectVersion)
          throw new SystemRefusal('conflict', `${shown} changed since it was read; read it again`);
        const mode = current ? current.stat.mode & 0o7777 : 0o600;
        const owner = current ? { uid: current.stat.uid, gid: current.stat.gid } : { uid: u.uid, gid: u.gid };
        const tmp = join(dir, `.${AUTHORIZED_KEYS}.ballast-${randomBytes(6).toString('hex')}`);
        try {
          const fh = await fsp.open(
            tmp,
            constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
            0o600,
          );
          try {
            await fh.writeFile(bytes);
            if (s.setOwner) await fh.chown(owner.uid, owner.gid);
            await fh.chmod(mode);
            await fh.sync();
          } finally {
            await fh.close();
          }
          // ~/.ssh must still be the directory we checked (not swapped for a link meanwhile)
          const again = await lstatOrNull(dir);
          if (!again || !again.isDirectory() || again.ino !== dirStat.ino || again.dev !== dirStat.dev) {
            throw new SystemRefusal('forbidden', `${join(u.shownHome, '.ssh')} was replaced during the write: refused`);
          }
          await fsp.rename(tmp, file);
        } catch (e) {
          await fsp.rm(tmp, { force: true });
          throw e;
        }
        await fsyncDir(dir);
        audit({ kind: WRITE_OP, requestId, argv: [shown], note: `user ${u.name}: ${bytes.length} bytes` });
        return { user: u.name, path: shown, version: sha256(bytes) };
      });
    },

    [GENERATE_OP]: async (payload, requestId): Promise<GenerateResult> => {
      const req = payloadOf(generatePayload, GENERATE_OP, payload);
      const u = await resolveUser(req.user, requestId);
      const dir = join(u.home, '.ssh');
      return withLock(`keys-op:${dir}`, async () => {
        await ensureSshDir(u);
        const pair = [KEY_FILE, `${KEY_FILE}.pub`].map((n) => ({
          path: join(dir, n),
          aside: join(dir, `.${n}.ballast-prev`),
          shown: join(u.shownHome, '.ssh', n),
        }));
        for (const f of pair) {
          const st = await lstatOrNull(f.path);
          if (st?.isSymbolicLink()) throw new SystemRefusal('forbidden', `${f.shown} is a symlink: refused`);
          if (st && !st.isFile()) throw new SystemRefusal('forbidden', `${f.shown} is not a regular file: refused`);
          // left by a run that died: put a pair that was moved aside back, drop one that was replaced
          const aside = await lstatOrNull(f.aside);
          if (aside?.isFile()) {
            if (st) await fsp.unlink(f.aside);
            else await fsp.rename(f.aside, f.path);
          }
        }
        const moved: typeof pair = [];
        const restore = async () => {
          for (const f of pair) await unlinkIfFile(f.path);
          for (const f of moved) await fsp.rename(f.aside, f.path);
          await fsyncDir(dir);
        };
        for (const f of pair) {
          if (await lstatOrNull(f.path)) {
            await fsp.rename(f.path, f.aside);
            moved.push(f);
          }
        }
        await fsyncDir(dir);
        const argv = [
          o.bin.runuser,
          '-u',
          u.name,
          '--',
          o.bin.sshKeygen,
          '-t',
          'ed25519',
          '-N',
          '',
          '-f',
          pair[0].path,
          '-C',
          `${u.name}@${commentHost}`,
          '-q',
        ];
        let result: ExecResult;
        try {
          result = await exec(argv, requestId, s.keygenTimeoutMs);
        } catch (e) {
          await restore();
          throw e;
        }
        if (result.code !== 0 || result.timedOut) {
          await restore();
          return { user: u.name, argv, result, replayed: false };
        }
        const written = await Promise.all(pair.map((f) => lstatOrNull(f.path)));
        if (written.every((st) => st === null) && o.replay) {
          await restore(); // a replayed ssh-keygen wrote nothing: the old pair stays
          return { user: u.name, argv, result, replayed: true };
        }
        if (!written.every((st) => st?.isFile())) {
          await restore();
          throw new SystemRefusal(
            'command_failed',
            `ssh-keygen exited 0 but did not write ${pair[0].shown} and its .pub`,
          );
        }
        try {
          for (const [i, f] of pair.entries()) {
            const fh = await fsp.open(f.path, constants.O_RDONLY | constants.O_NOFOLLOW);
            try {
              if (s.setOwner) await fh.chown(u.uid, u.gid);
              await fh.chmod(i === 0 ? 0o600 : 0o644);
              await fh.sync();
            } finally {
              await fh.close();
            }
          }
        } catch (e) {
          await restore();
          throw e;
        }
        for (const f of moved) await fsp.unlink(f.aside);
        await fsyncDir(dir);
        audit({ kind: GENERATE_OP, requestId, argv: [pair[0].shown], note: `user ${u.name}: new ed25519 pair` });
        return { user: u.name, argv, result, replayed: false };
      });
    },
  };
}
