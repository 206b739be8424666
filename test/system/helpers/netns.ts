/**
 * Network-namespace harness for the system test tier (and for recording network fixtures).
 *
 * Every namespace it makes is private: the product's side of each veth pair lives in the
 * namespace the test inspects, the other end in a second "peer" namespace, so nothing is ever
 * created in (or moved into) the machine's root namespace and the host's own interfaces are
 * never touched. Commands run with argv arrays through execFile (no shell), under LC_ALL=C,
 * because the parsers are written for the C locale.
 *
 * A missing tool is a hard error, never a skip: a system test that silently skips proves
 * nothing, and CI must go red if the machine lost iproute2 or ethtool.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';

export const IP = '/usr/sbin/ip';
export const ETHTOOL = '/usr/sbin/ethtool';

export interface VethSpec {
  /** name of the product's end (inside the namespace) */
  name: string;
  /** name of the other end (inside the peer namespace) */
  peer: string;
  /** CIDR for the product's end, e.g. `192.0.2.10/24` (broadcast is derived) */
  address?: string;
  /** CIDR for the peer end */
  peerAddress?: string;
  /** bring the product's end up (default true) */
  up?: boolean;
  /** bring the peer end up (default true); false leaves the product's end without carrier */
  peerUp?: boolean;
}

export interface NetnsOptions {
  /** base name; a pid/counter suffix is always added so parallel test files never collide */
  name?: string;
  veths: VethSpec[];
}

export type { ExecOptions, ExecResult } from './exec';
import { exec as execRaw, run as must, type ExecOptions, type ExecResult } from './exec';

export interface Netns {
  /** the namespace holding the product's interfaces */
  name: string;
  /** the namespace holding the far ends of the veth pairs */
  peerName: string;
  /** run argv inside `name`; resolves with the exit code instead of throwing */
  exec(argv: string[], opts?: ExecOptions): Promise<ExecResult>;
  /** run argv inside `peerName` */
  execPeer(argv: string[], opts?: ExecOptions): Promise<ExecResult>;
  /** like exec, but rejects (naming argv, code and stderr) unless the exit code is 0 */
  run(argv: string[], opts?: ExecOptions): Promise<ExecResult>;
  /** deletes both namespaces (and with them every veth); safe to call twice */
  cleanup(): Promise<void>;
}

let counter = 0;
const live = new Set<string>();
let exitHookInstalled = false;

/** Throws a readable error if a required binary is not there: the caller must not skip. */
export function requireTool(path: string, pkg: string): void {
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `netns harness: required tool ${path} is missing or not executable (install the Debian package "${pkg}")`,
    );
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A crashed test must not leave namespaces behind for the next run.
  process.on('exit', () => {
    for (const ns of live) {
      try {
        execFileSync(IP, ['netns', 'del', ns], { stdio: 'ignore' });
      } catch {
        /* already gone */
      }
    }
  });
}

export function netnsExists(name: string): boolean {
  return existsSync(`/run/netns/${name}`);
}

export async function createNetns(opts: NetnsOptions): Promise<Netns> {
  requireTool(IP, 'iproute2');
  const base = opts.name ?? 'ballast-t';
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(base))
    throw new Error(`netns harness: bad namespace base name ${JSON.stringify(base)}`);
  counter += 1;
  const name = `${base}-${process.pid}-${counter}`;
  const peerName = `${name}-p`;
  installExitHook();

  const cleanup = async () => {
    for (const ns of [name, peerName]) {
      if (netnsExists(ns)) await execRaw([IP, 'netns', 'del', ns]);
      live.delete(ns);
    }
  };

  try {
    for (const ns of [name, peerName]) {
      await must([IP, 'netns', 'add', ns]);
      live.add(ns);
      await must([IP, '-n', ns, 'link', 'set', 'lo', 'up']);
    }
    for (const v of opts.veths) {
      // Created inside the namespace with the peer placed straight into the peer namespace:
      // the pair never exists in the root namespace, not even for a moment.
      await must([IP, '-n', name, 'link', 'add', v.name, 'type', 'veth', 'peer', 'name', v.peer, 'netns', peerName]);
      if (v.address) await must([IP, '-n', name, 'addr', 'add', v.address, 'brd', '+', 'dev', v.name]);
      if (v.peerAddress) await must([IP, '-n', peerName, 'addr', 'add', v.peerAddress, 'brd', '+', 'dev', v.peer]);
      if (v.peerUp !== false) await must([IP, '-n', peerName, 'link', 'set', v.peer, 'up']);
      if (v.up !== false) await must([IP, '-n', name, 'link', 'set', v.name, 'up']);
    }
    // The kernel sets operstate UP asynchronously (linkwatch); wait for it so tests see the
    // steady state instead of racing it.
    const expectUp = opts.veths.filter((v) => v.up !== false && v.peerUp !== false).map((v) => v.name);
    const deadline = Date.now() + 5_000;
    for (;;) {
      const r = await must([IP, '-n', name, '-j', 'link', 'show']);
      const states = new Map(
        (JSON.parse(r.stdout) as { ifname: string; operstate: string }[]).map((l) => [l.ifname, l.operstate]),
      );
      if (expectUp.every((n) => states.get(n) === 'UP')) break;
      if (Date.now() > deadline) throw new Error(`netns harness: ${expectUp.join(', ')} did not reach operstate UP`);
      await new Promise((res) => setTimeout(res, 50));
    }
  } catch (e) {
    await cleanup();
    throw e;
  }

  const inNs = (ns: string) => (argv: string[], o?: ExecOptions) => execRaw([IP, 'netns', 'exec', ns, ...argv], o);
  return {
    name,
    peerName,
    exec: inNs(name),
    execPeer: inNs(peerName),
    run: async (argv, o) => {
      const r = await inNs(name)(argv, o);
      if (r.code !== 0) throw new Error(`netns ${name}: ${argv.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
      return r;
    },
    cleanup,
  };
}
