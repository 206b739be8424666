/**
 * `findmnt -J -o TARGET,SOURCE,FSTYPE[,OPTIONS] [--source DEV | --mountpoint DIR]`
 * (util-linux 2.38.1), for every area that asks it about mounts: fs lists them all (findmntArgv),
 * pod asks what is mounted on one place (`-o TARGET,SOURCE,FSTYPE --mountpoint P`, options then
 * []). JSON avoids the text table's problems (spaces in mountpoints, which
 * `mount` prints raw and /proc/self/mountinfo escapes as `\040`): findmnt's JSON holds the real
 * path (recorded here with a mountpoint containing a space).
 *
 * The default output is a tree (`children`); `-l` gives a flat array. Both are accepted and
 * returned flat, each entry keeping its parent's target.
 *
 * When nothing matches, findmnt prints NOTHING and exits 1: empty stdout is "no mounts", not
 * an error, and the route must not treat that exit code as a failure.
 */
import * as z from 'zod';
import { ParseError } from '../core/parse-error';
import { parseJsonOutput } from './json-output';

const PARSER = 'findmnt';

/** One mounted filesystem from `findmnt -J` (tree flattened, parent kept). */
export const mountEntry = z.object({
  target: z.string(),
  /** as findmnt prints it, e.g. `/dev/vda` or `/dev/vda[/srv/x]` for a bind mount */
  source: z.string(),
  /** `source` without a bind-mount `[/root]` suffix */
  sourceDevice: z.string(),
  /** the `[/root]` part of a bind mount, else null */
  fsroot: z.string().nullable(),
  fstype: z.string(),
  /** [] when OPTIONS was not asked for */
  options: z.array(z.string()),
  parentTarget: z.string().nullable(),
});
export type MountEntry = z.infer<typeof mountEntry>;

export function findmntArgv(filter?: { source?: string; mountpoint?: string }): string[] {
  const argv = ['/usr/bin/findmnt', '-J', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS'];
  if (filter?.source !== undefined) argv.push('--source', filter.source);
  if (filter?.mountpoint !== undefined) argv.push('--mountpoint', filter.mountpoint);
  return argv;
}

interface RawFs {
  target: string;
  source: string;
  fstype: string;
  options?: string | null;
  children?: RawFs[];
}
const rawFs: z.ZodType<RawFs> = z.lazy(() =>
  z.object({
    target: z.string(),
    source: z.string(),
    fstype: z.string(),
    options: z.string().nullish(),
    children: z.array(rawFs).optional(),
  }),
);
const rawOutput = z.object({ filesystems: z.array(rawFs) });

/** Split mount options on commas, except inside double quotes (`context="a,b"`). */
export function splitMountOptions(options: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const c of options) {
    if (c === '"') quoted = !quoted;
    if (c === ',' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur !== '' || out.length > 0) out.push(cur);
  return out.filter((o) => o !== '');
}

/** `/dev/vda[/srv/x]` (bind mount of a subdirectory) → device and root. */
function splitSource(source: string): { sourceDevice: string; fsroot: string | null } {
  const m = /^(.*)\[(\/.*)\]$/.exec(source);
  return m ? { sourceDevice: m[1], fsroot: m[2] } : { sourceDevice: source, fsroot: null };
}

/** Every filesystem of the output, flattened, parents before their children; empty output is none. */
export function parseFindmnt(stdout: string): MountEntry[] {
  if (stdout.trim() === '') return [];
  const { filesystems } = parseJsonOutput(PARSER, stdout, rawOutput);
  const out: MountEntry[] = [];
  const walk = (fs: RawFs, parentTarget: string | null) => {
    if (fs.target === '') throw new ParseError(PARSER, 'filesystem with an empty target');
    out.push({
      target: fs.target,
      source: fs.source,
      ...splitSource(fs.source),
      fstype: fs.fstype,
      options: splitMountOptions(fs.options ?? ''),
      parentTarget,
    });
    for (const child of fs.children ?? []) walk(child, fs.target);
  };
  for (const fs of filesystems) walk(fs, null);
  return out;
}

/**
 * The filesystem `findmnt --mountpoint P` names (the route reads it only when findmnt found one:
 * exit 0). Several stacked on one place: the last one listed is the one seen there.
 */
export function parseFindmntOne(stdout: string): MountEntry {
  const all = parseFindmnt(stdout);
  if (all.length === 0) throw new ParseError(PARSER, 'expected a filesystem');
  return all[all.length - 1];
}
