/**
 * runtime/system/confine.ts on its own (#35): which argv runs, with which operands resolved, and
 * which is refused, on private directories (symlinks, a FIFO, a root's sibling).
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  operandsAfterDashDash,
  PathConfinement,
  realRoots,
  resolvePath,
  type CommandPolicy,
  type OwnerCheck,
} from '../../runtime/system/confine';
import { SystemRefusal } from '../../runtime/system/types';
import { privateDir } from '../helpers/tmp';

function refusal(f: () => unknown): [string, string] {
  try {
    f();
  } catch (e) {
    if (e instanceof SystemRefusal) return [e.code, e.message];
    throw e;
  }
  throw new Error('not refused');
}

/** data/ (a root), data2/ (its sibling), link -> data2, data/fifo */
function tree() {
  const dir = privateDir('confine');
  for (const d of ['data/sub', 'data2', 'other']) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, 'data/file'), 'x');
  symlinkSync(join(dir, 'data2'), join(dir, 'data/link'));
  symlinkSync(join(dir, 'data'), join(dir, 'root-link'));
  execFileSync('mkfifo', [join(dir, 'data/fifo')]);
  return dir;
}

const mountPolicy: CommandPolicy = (argv) => {
  const ops = operandsAfterDashDash(argv);
  if (!ops) return null;
  if (argv[1] === '--refuse') return 'refused shape';
  return ops.map((o) => ({ path: o.value, kind: 'fs.mount', argvIndex: o.index, strictlyBelow: true }));
};
const readPolicy: CommandPolicy = (argv, stdin) =>
  argv[1] === '--stdin'
    ? (stdin ?? '')
        .split('\n')
        .filter(Boolean)
        .map((p) => ({ path: p, kind: 'fs.read', readsFile: true }))
    : null;

describe('operands and paths', () => {
  it('operandsAfterDashDash: each operand after the first -- with its argv index', () => {
    expect(operandsAfterDashDash(['/bin/x', '-a', '--', '/p', '--', 'q'])).toEqual([
      { index: 3, value: '/p' },
      { index: 4, value: '--' },
      { index: 5, value: 'q' },
    ]);
    expect(operandsAfterDashDash(['/bin/x', '--'])).toEqual([]);
    expect(operandsAfterDashDash(['/bin/x', '/p'])).toBeUndefined();
  });
  it('resolvePath: absolute paths only, no NUL; symlinks followed, .. folded, a missing tail kept', () => {
    const dir = tree();
    expect(resolvePath(join(dir, 'data/link/new/../n2'))).toBe(join(dir, 'data2/n2'));
    expect(resolvePath(join(dir, 'root-link'))).toBe(join(dir, 'data'));
    expect(refusal(() => resolvePath('rel/p'))).toEqual(['bad_request', '"rel/p" is not an absolute path']);
    expect(refusal(() => resolvePath('/a\0b'))).toEqual(['bad_request', '"/a\\u0000b" is not an absolute path']);
  });
  it('realRoots: a root through a symlink is its real path; an unresolvable one stays as given', () => {
    const dir = tree();
    expect(realRoots([join(dir, 'root-link'), 'relative'])).toEqual([join(dir, 'data'), 'relative']);
  });
});

describe('PathConfinement', () => {
  const make = (dir: string, managed?: ConstructorParameters<typeof PathConfinement>[1]) => {
    const c = new PathConfinement({ mount: '/usr/bin/mount', cat: '/usr/bin/cat' }, managed);
    c.addRoots('fs.mount', [join(dir, 'root-link')]);
    c.addRoots('fs.read', [join(dir, 'data')]);
    c.addPolicy('mount', mountPolicy);
    c.addPolicy('cat', readPolicy);
    return c;
  };

  it('kinds: each with its area (from the name, or given) and real roots', () => {
    const dir = tree();
    const c = make(dir);
    c.addRoots('host-kind', ['/']);
    c.addRoots('custom', ['/'], 'pod');
    c.addRoots('fs.read', [join(dir, 'other')]);
    expect(c.kinds()).toEqual([
      { kind: 'fs.mount', area: 'fs', roots: [join(dir, 'data')] },
      { kind: 'fs.read', area: 'fs', roots: [join(dir, 'data'), join(dir, 'other')] },
      { kind: 'host-kind', area: 'host', roots: ['/'] },
      { kind: 'custom', area: 'pod', roots: ['/'] },
    ]);
    expect(c.rootsOf('fs.read')).toEqual([join(dir, 'data'), join(dir, 'other')]);
    expect(c.rootsOf('nothing')).toEqual([]);
    // any one root admits a path: the second root's files are inside too
    expect(c.resolve(join(dir, 'other/f'), 'fs.read')).toBe(join(dir, 'other/f'));
    expect(() => c.addRoots('fs.read', ['/'], 'pod')).toThrow('path kind fs.read is registered by fs and pod');
    expect(() => c.resolve('/x', 'nothing')).toThrow('no roots configured for path kind nothing');
  });

  it('check: operands resolved into argv; a root itself is refused where strictly below is asked', () => {
    const dir = tree();
    const c = make(dir);
    expect(c.check(['/usr/bin/mount', '-o', 'ro', '--', join(dir, 'root-link/sub')], undefined)).toEqual([
      '/usr/bin/mount',
      '-o',
      'ro',
      '--',
      join(dir, 'data/sub'),
    ]);
    expect(refusal(() => c.check(['/usr/bin/mount', '--', join(dir, 'data')], undefined))).toEqual([
      'forbidden',
      `${join(dir, 'data')} is outside the fs.mount roots this host allows (${join(dir, 'data')})`,
    ]);
  });

  it('a symlink out of the root and a sibling directory are outside; the message shows the real path', () => {
    const dir = tree();
    const c = make(dir);
    expect(refusal(() => c.check(['/usr/bin/mount', '--', join(dir, 'data/link/x')], undefined))).toEqual([
      'forbidden',
      `${join(dir, 'data/link/x')} (${join(dir, 'data2/x')}) is outside the fs.mount roots this host allows (${join(dir, 'data')})`,
    ]);
    expect(refusal(() => c.resolve(join(dir, 'data2'), 'fs.read'))[1]).toBe(
      `${join(dir, 'data2')} is outside the fs.read roots this host allows (${join(dir, 'data')})`,
    );
    const up = `${dir}/data/sub/../../data2`;
    expect(refusal(() => c.resolve(up, 'fs.read'))[1]).toBe(
      // `..` folded lexically gives the real path: no need to show it twice
      `${up} is outside the fs.read roots this host allows (${join(dir, 'data')})`,
    );
    expect(c.resolve(`${dir}/data/./x/..`, 'fs.read')).toBe(join(dir, 'data'));
  });

  it('an argv no policy knows runs unchanged only for a binary without policies; otherwise refused', () => {
    const dir = tree();
    const c = make(dir);
    expect(c.check(['/usr/bin/true', join(dir, 'data2')], undefined)).toEqual(['/usr/bin/true', join(dir, 'data2')]);
    expect(refusal(() => c.check(['/usr/bin/mount', join(dir, 'data/sub')], undefined))).toEqual([
      'forbidden',
      'mount: this host never runs mount with these arguments',
    ]);
    expect(refusal(() => c.check(['/usr/bin/mount', '--refuse', '--', join(dir, 'data/sub')], undefined))).toEqual([
      'forbidden',
      'mount: refused shape',
    ]);
  });

  it('a tool without a configured binary gets no policy: its argv is not on the allow-list', () => {
    const dir = tree();
    const c = new PathConfinement({});
    c.addRoots('fs.mount', [join(dir, 'data')]);
    c.addPolicy('mount', mountPolicy);
    expect(c.check(['/usr/bin/mount', '--', join(dir, 'data2')], undefined)).toEqual([
      '/usr/bin/mount',
      '--',
      join(dir, 'data2'),
    ]);
  });

  it('names read from stdin are checked; a FIFO a command would read is refused, a regular file passes', () => {
    const dir = tree();
    const c = make(dir);
    expect(c.check(['/usr/bin/cat', '--stdin'], `${join(dir, 'data/file')}\n${join(dir, 'data/missing')}\n`)).toEqual([
      '/usr/bin/cat',
      '--stdin',
    ]);
    expect(refusal(() => c.check(['/usr/bin/cat', '--stdin'], `${join(dir, 'data/fifo')}\n`))).toEqual([
      'bad_request',
      `${join(dir, 'data/fifo')} is not a regular file`,
    ]);
    expect(refusal(() => c.check(['/usr/bin/cat', '--stdin'], `${join(dir, 'data2')}\n`))[0]).toBe('forbidden');
  });

  it("the owners table refuses another owner's path, with the kind's area, roots and recursive flag", () => {
    const dir = tree();
    const seen: [string, OwnerCheck][] = [];
    const c = make(dir, {
      refusal: (real, chk) => {
        seen.push([real, chk]);
        return real.endsWith('/sub') ? `${real} is managed by pod` : null;
      },
    });
    expect(refusal(() => c.resolve(join(dir, 'data/sub'), 'fs.read', false, true))).toEqual([
      'forbidden',
      `${join(dir, 'data/sub')} is managed by pod`,
    ]);
    expect(c.resolve(join(dir, 'data/file'), 'fs.read')).toBe(join(dir, 'data/file'));
    c.checkOwner(join(dir, 'data/file'), 'fs.mount', { show: (p) => p });
    expect(seen.map(([real, chk]) => [real, chk.area, chk.roots, chk.recursive])).toEqual([
      [join(dir, 'data/sub'), 'fs', [join(dir, 'data')], true],
      [join(dir, 'data/file'), 'fs', [join(dir, 'data')], false],
      [join(dir, 'data/file'), 'fs', [join(dir, 'data')], undefined],
    ]);
    expect(typeof seen[2][1].show).toBe('function');
  });

  it('of two policies for one binary, the first that accepts wins; else the first refusal is thrown', () => {
    const dir = tree();
    const c = new PathConfinement({ mount: '/usr/bin/mount', other: '/usr/bin/mount' });
    c.addRoots('fs.mount', [join(dir, 'data')]);
    c.addRoots('pod.vol', [join(dir, 'data2')]);
    c.addPolicy('mount', mountPolicy);
    c.addPolicy('other', (argv) => [{ path: argv[argv.length - 1], kind: 'pod.vol', argvIndex: argv.length - 1 }]);
    expect(c.check(['/usr/bin/mount', '--', join(dir, 'data2/v')], undefined)).toEqual([
      '/usr/bin/mount',
      '--',
      join(dir, 'data2/v'),
    ]);
    expect(refusal(() => c.check(['/usr/bin/mount', '--', join(dir, 'other')], undefined))[1]).toMatch(
      /outside the fs\.mount roots/,
    );
  });
});
