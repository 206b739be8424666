/**
 * The appliance's own TLS pieces on disk, and the durable commit window.
 *
 * A change (ingest, regenerate) first copies all four piece files into
 * `<stateDir>/certificate/previous/`, then writes `<stateDir>/certificate/journal.json`
 * (atomically: its presence is the commit point of "a change is under way"), then swaps the
 * pieces and reloads TLS. Commit deletes the journal; the timer, or the next start when the
 * deadline passed while the host was down, puts the previous files back (contents and modes),
 * reloads TLS and sends `certificate.tls.rolled_back`. A regenerate journal is deleted as soon as its
 * swap is complete, so one found at start means a crash mid-swap: it is rolled back at once.
 *
 * File work here is synchronous: the files are small, and at start it must be finished before
 * the HTTP server reads the certificate.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, unlinkSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import * as z from 'zod';
import { PIECES, type Piece } from '../../../handlers/certificate/contract';
import { atomicWriteSync, isErrno, readRegular, removeStaleTemps } from '../../system/files';
import { SystemRefusal } from '../../system/types';

const journal = z.object({
  kind: z.enum(['ingest', 'regenerate']),
  /** ms since the epoch; rollback is due from then on */
  deadline: z.number(),
  startedAt: z.number(),
  /** the pieces the change touched */
  changed: z.array(z.enum(PIECES)),
  previous: z.record(
    z.enum(PIECES),
    z.object({
      present: z.boolean(),
      mode: z.number().optional(),
      uid: z.number().optional(),
      gid: z.number().optional(),
    }),
  ),
});
export type Journal = z.output<typeof journal>;

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** What an interrupted atomicWriteSync leaves beside its target (runtime/system/files.ts names them so). */

export function removeSync(path: string): void {
  try {
    unlinkSync(path);
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return;
    throw e;
  }
  fsyncDir(dirname(path));
}

/**
 * A file this area keeps (a TLS piece, a trusted certificate): its bytes, mode and owner, or
 * undefined when it does not exist. Read with readRegular (never through a last-moment symlink,
 * never blocking on a FIFO); a symlink, a special file or one larger than 1 MiB is a 409: it is
 * not a file the area wrote (README "Trust store rules", "The TLS pieces").
 */
export function readManaged(
  path: string,
  what: string,
): { data: Buffer; mode: number; uid: number; gid: number } | undefined {
  let st: Stats | undefined;
  let data: Buffer | null;
  try {
    data = readRegular(path, `${what} (${path})`, { maxBytes: 1024 * 1024, check: (s) => ((st = s), null) });
  } catch (e) {
    if (e instanceof SystemRefusal) throw new SystemRefusal('conflict', e.message);
    throw e;
  }
  if (data === null || !st) return undefined;
  return { data, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
}

export interface TlsFiles {
  paths: Record<Piece, string>;
  /** `<stateDir>/certificate` */
  dir: string;
}

export const MODE: Record<Piece, number> = { root: 0o644, intermediate: 0o644, server: 0o644, private_key: 0o600 };

export class TlsFileStore {
  readonly journalFile: string;
  readonly previousDir: string;

  constructor(private readonly f: TlsFiles) {
    this.journalFile = join(f.dir, 'journal.json');
    this.previousDir = join(f.dir, 'previous');
  }

  path(piece: Piece): string {
    return this.f.paths[piece];
  }

  /** The current text of every piece that exists. */
  current(): Partial<Record<Piece, string>> {
    const out: Partial<Record<Piece, string>> = {};
    for (const p of PIECES) {
      const r = readManaged(this.path(p), `the ${p} file`);
      if (r) out[p] = r.data.toString('utf8');
    }
    return out;
  }

  journal(): Journal | undefined {
    let text: string;
    try {
      text = readFileSync(this.journalFile, 'utf8');
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return undefined;
      throw e;
    }
    const r = journal.safeParse(JSON.parse(text));
    if (!r.success) throw new Error(`${this.journalFile} is not a certificate journal: ${r.error.message}`);
    return r.data;
  }

  /** Copy every piece aside and write the journal: from here on a crash rolls back. */
  begin(kind: Journal['kind'], deadline: number, changed: Piece[]): Journal {
    rmSync(this.previousDir, { recursive: true, force: true });
    mkdirSync(this.f.dir, { recursive: true, mode: 0o700 });
    mkdirSync(this.previousDir, { recursive: true, mode: 0o700 });
    const previous = {} as Journal['previous'];
    for (const p of PIECES) {
      const r = readManaged(this.path(p), `the ${p} file`);
      previous[p] = r ? { present: true, mode: r.mode, uid: r.uid, gid: r.gid } : { present: false };
      if (r) atomicWriteSync(join(this.previousDir, p), r.data, 0o600);
    }
    const j: Journal = { kind, deadline, startedAt: Date.now(), changed, previous };
    atomicWriteSync(this.journalFile, JSON.stringify(j), 0o600);
    return j;
  }

  /**
   * Write (or, for undefined, remove) the given pieces: certificates 0644, the key 0600; a file
   * that is replaced keeps its owner and group (a key shared with a service group stays so).
   */
  apply(pieces: Partial<Record<Piece, string | undefined>>, previous?: Journal['previous']): void {
    for (const p of PIECES) {
      if (!(p in pieces)) continue;
      const text = pieces[p];
      const prev = previous?.[p];
      if (text === undefined) removeSync(this.path(p));
      else
        atomicWriteSync(
          this.path(p),
          text,
          MODE[p],
          prev?.uid !== undefined && prev.gid !== undefined ? { uid: prev.uid, gid: prev.gid } : undefined,
        );
    }
  }

  /** Put the journal's previous pieces back (contents, modes, owner and group). Idempotent. */
  restore(j: Journal): void {
    for (const p of PIECES) {
      const prev = j.previous[p];
      if (prev?.present) {
        const owner = prev.uid !== undefined && prev.gid !== undefined ? { uid: prev.uid, gid: prev.gid } : undefined;
        atomicWriteSync(this.path(p), readFileSync(join(this.previousDir, p)), prev.mode ?? MODE[p], owner);
      } else if (prev) removeSync(this.path(p));
    }
  }

  /** Remove the copies of the previous pieces (no journal refers to them). */
  discardPrevious(): void {
    rmSync(this.previousDir, { recursive: true, force: true });
  }

  /** Forget the previous pieces: the change stays (commit) or was undone (after restore). */
  finish(): void {
    removeSync(this.journalFile);
    rmSync(this.previousDir, { recursive: true, force: true });
  }

  /**
   * Temp files of interrupted writes beside the pieces and in the state directory (the host sweeps
   * the configured paths' directories at start, not the state directory).
   */
  removeStaleTemps(): string[] {
    return removeStaleTemps([...PIECES.map((p) => dirname(this.path(p))), this.f.dir]);
  }
}
