/**
 * Private network namespaces for the traffic-control tests and the tc fixture recorder.
 *
 * Everything here runs argv arrays (spawn without a shell) and only ever touches namespaces
 * this module created: the machine's own interfaces are never named. Names carry the pid so
 * two test files (vitest runs two forks) or a leftover from a crashed run never collide.
 *
 * A missing tool or a non-root user is a loud failure, never a skip: a system test that
 * silently skips proves nothing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

export const IP = '/usr/sbin/ip';
export const TC = '/usr/sbin/tc';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run one argv (no shell) under LC_ALL=C, return code/stdout/stderr. Throws if it cannot start. */
export function run(argv: readonly string[], opts: { timeoutMs?: number } = {}): RunResult {
  const [bin, ...args] = argv;
  if (!bin) throw new Error('run: empty argv');
  const r = spawnSync(bin, args, {
    encoding: 'utf8',
    env: { ...process.env, LC_ALL: 'C' },
    timeout: opts.timeoutMs ?? 20_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.error) throw new Error(`cannot run ${JSON.stringify(argv)}: ${r.error.message}`);
  if (r.status === null) throw new Error(`${JSON.stringify(argv)} ended by signal ${r.signal}`);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Like run(), but a non-zero exit is an error that names the argv and its stderr. */
export function must(argv: readonly string[]): RunResult {
  const r = run(argv);
  if (r.code !== 0) {
    throw new Error(`${JSON.stringify(argv)} exited ${r.code}: ${r.stderr.trim()}`);
  }
  return r;
}

/** The argv that runs `argv` inside namespace `ns` (ip netns exec also gives it its own /sys). */
export function inNetns(ns: string, argv: readonly string[]): string[] {
  return [IP, 'netns', 'exec', ns, ...argv];
}

/** Fail loudly (not skip) when the test cannot mean anything on this machine. */
export function requireNetnsTools(): void {
  for (const bin of [IP, TC, process.execPath]) {
    try {
      accessSync(bin, constants.X_OK);
    } catch {
      throw new Error(`required tool ${bin} is missing or not executable`);
    }
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error('these tests need root (network namespaces, tc)');
  }
}

export interface VethPair {
  /** namespace holding `devA` (the shaping side: "this box") */
  nsA: string;
  /** namespace holding `devB` (the peer) */
  nsB: string;
  devA: string;
  devB: string;
  addrA: string;
  /** the peer's addresses, each on devB; the first one is the primary */
  addrsB: string[];
  /** Delete both namespaces (and with them the veth). Safe to call twice. */
  cleanup(): void;
}

export interface VethPairOptions {
  /** short tag to make names readable in `ip netns list`; letters/digits only */
  tag: string;
  /** third octet of 10.213.<x>.0/24 used on the link */
  subnet?: number;
  /** how many addresses the peer gets (first .2, then .3, ...) */
  peerAddresses?: number;
}

/**
 * Two fresh namespaces joined by a veth: `veth0` in A (10.213.x.1/24), `veth1` in B with one
 * or more addresses. Every command is `ip -n <ns> ...`, so nothing is ever created in the
 * machine's own namespace, not even for a moment.
 */
export function createVethPair(opts: VethPairOptions): VethPair {
  if (!/^[a-z0-9]{1,8}$/.test(opts.tag)) throw new Error(`bad tag ${opts.tag}`);
  const subnet = opts.subnet ?? 77;
  const nsA = `blt-${opts.tag}-${process.pid}-a`;
  const nsB = `blt-${opts.tag}-${process.pid}-b`;
  const devA = 'veth0';
  const devB = 'veth1';
  const addrA = `10.213.${subnet}.1`;
  const addrsB = Array.from({ length: opts.peerAddresses ?? 2 }, (_, i) => `10.213.${subnet}.${i + 2}`);
  const cleanup = () => {
    for (const ns of [nsA, nsB]) deleteNetns(ns);
  };
  try {
    must([IP, 'netns', 'add', nsA]);
    must([IP, 'netns', 'add', nsB]);
    must([IP, '-n', nsA, 'link', 'add', devA, 'type', 'veth', 'peer', 'name', devB, 'netns', nsB]);
    must([IP, '-n', nsA, 'link', 'set', 'lo', 'up']);
    must([IP, '-n', nsB, 'link', 'set', 'lo', 'up']);
    must([IP, '-n', nsA, 'addr', 'add', `${addrA}/24`, 'dev', devA]);
    for (const a of addrsB) must([IP, '-n', nsB, 'addr', 'add', `${a}/24`, 'dev', devB]);
    must([IP, '-n', nsA, 'link', 'set', devA, 'up']);
    must([IP, '-n', nsB, 'link', 'set', devB, 'up']);
  } catch (e) {
    cleanup();
    throw e;
  }
  return { nsA, nsB, devA, devB, addrA, addrsB, cleanup };
}

/** Remove one namespace this process created; "not there" is fine (idempotent cleanup). */
export function deleteNetns(ns: string): void {
  const r = run([IP, 'netns', 'del', ns]);
  if (r.code !== 0 && !/No such file|Invalid argument/.test(r.stderr)) {
    throw new Error(`ip netns del ${ns} failed: ${r.stderr.trim()}`);
  }
}

// ---------------------------------------------------------------------------------------------
// A timed TCP transfer between the namespaces, using only Node's net module.

/**
 * Receiver: listens on every address given, reads each connection to the end and answers one
 * line with the byte count. Prints "ready" once all listeners are bound so the caller does not
 * race it. Runs until killed.
 */
const RECEIVER_JS = `
const net = require('node:net');
const port = Number(process.argv[1]);
const addrs = process.argv.slice(2);
let bound = 0;
for (const host of addrs) {
  const srv = net.createServer((sock) => {
    let n = 0;
    sock.on('data', (b) => { n += b.length; });
    sock.on('end', () => { sock.end(String(n) + '\\n'); });
    sock.on('error', () => {});
  });
  srv.listen(port, host, () => { if (++bound === addrs.length) process.stdout.write('ready\\n'); });
}
`;

/**
 * Sender: connects, writes <bytes> bytes, half-closes, and waits for the receiver's count.
 * The clock runs from connect to that answer, so it covers the whole payload crossing the
 * shaped link (the answer travels back unshaped).
 */
const SENDER_JS = `
const net = require('node:net');
const [host, port, bytes] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
const sock = net.connect(port, host);
let t0 = 0; let answer = '';
sock.on('connect', () => {
  t0 = performance.now();
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let left = bytes;
  const pump = () => {
    while (left > 0) {
      const n = Math.min(left, chunk.length); left -= n;
      if (!sock.write(n === chunk.length ? chunk : chunk.subarray(0, n))) { sock.once('drain', pump); return; }
    }
    sock.end();
  };
  pump();
});
sock.on('data', (b) => { answer += b; });
sock.on('end', () => {
  const ms = performance.now() - t0;
  process.stdout.write(JSON.stringify({ received: Number(answer.trim()), ms }) + '\\n');
});
sock.on('error', (e) => { process.stderr.write(String(e) + '\\n'); process.exit(2); });
`;

export interface Receiver {
  stop(): Promise<void>;
}

/** Start the receiver inside `ns`, resolved once it listens on all `addrs`. */
export function startReceiver(ns: string, addrs: string[], port: number): Promise<Receiver> {
  const argv = inNetns(ns, [process.execPath, '-e', RECEIVER_JS, String(port), ...addrs]);
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`receiver did not start: ${err.trim()}`));
    }, 10_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('ready')) {
        clearTimeout(timer);
        resolve({ stop });
      }
    });
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`receiver exited ${code}: ${err.trim()}`));
    });
  });
}

export interface TransferResult {
  received: number;
  ms: number;
}

/** Send `bytes` from namespace `ns` to host:port and report how long it took. */
export function timedSend(ns: string, host: string, port: number, bytes: number): Promise<TransferResult> {
  const argv = inNetns(ns, [process.execPath, '-e', SENDER_JS, host, String(port), String(bytes)]);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`transfer to ${host} timed out`));
    }, 25_000);
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`sender exited ${code}: ${err.trim()}`));
      try {
        resolve(JSON.parse(out) as TransferResult);
      } catch {
        reject(new Error(`sender printed ${JSON.stringify(out)}`));
      }
    });
  });
}
