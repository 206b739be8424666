import type { FetchHandler } from '../http/server';
import type { BindingSocket } from '../bindings/socket';

export type IsolateRuntime = 'workerd' | 'deno';

export interface Isolated extends FetchHandler {
  runtime: IsolateRuntime;
  /** The isolate's process, when the host spawned one itself (deno). */
  pid?: number;
  /** From spawn to serving, in ms. */
  coldStartMs: number;
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

export interface IsolateOptions {
  distDir: string;
  stateDir: string;
  socket: BindingSocket;
  vars: unknown;
  log: (line: string) => void;
  /** The isolate died while the host was serving (the host then exits non-zero: serve.ts). */
  onExit?: (why: string) => void;
}
