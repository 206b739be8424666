import type { FetchHandler } from '../http/server';
import type { BindingSocket } from '../bindings/socket';
import type { Call, Reply } from '../../handlers/core/pipeline';
import type { HopOptions } from './forward';

export type IsolateRuntime = 'workerd' | 'deno';

export interface Isolated extends FetchHandler {
  runtime: IsolateRuntime;
  /** The isolate's process, when the host spawned one itself (deno). */
  pid?: number;
  /** From spawn to serving, in ms. */
  coldStartMs: number;
  fetch(request: Request): Promise<Response>;
  /** The host's own calls, forwarded without WHATWG objects (forward.ts). */
  handle(call: Call): Promise<Reply>;
  close(): Promise<void>;
}

export interface IsolateOptions {
  distDir: string;
  stateDir: string;
  socket: BindingSocket;
  vars: unknown;
  /** the hop secret (given to the isolate as env.HOP_SECRET) and what the host adds to each request */
  hop: HopOptions;
  log: (line: string) => void;
  /** The isolate died while the host was serving (the host then exits non-zero: serve.ts). */
  onExit?: (why: string) => void;
}
