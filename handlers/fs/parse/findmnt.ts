/**
 * `findmnt -J [-o TARGET,SOURCE,FSTYPE,OPTIONS] [--source DEV | --mountpoint DIR]`
 * (util-linux 2.38.1). JSON avoids the text table's problems (spaces in mountpoints, which
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
import { ParseError } from '../../core/parse-error';
import type { MountEntry } from '../schemas';
import { parseJsonOutput } from './json';

const PARSER = 'findmnt';

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
