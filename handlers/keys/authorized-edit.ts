/**
 * Read-modify-write of an authorized_keys file through the host's compare-and-swap write: the
 * routes run under one in-process lock (no interleaving in this process), and the version check
 * catches any other writer (a person with an editor, a second process); then the change is
 * planned again from what is there now.
 */
import { ApiError } from '../core/errors';
import type { SystemClient } from '../core/system';
import { READ_OP, WRITE_OP, type ReadResult, type WriteResult } from './contract';

export const AUTH_LOCK = 'keys-authorized';
const ATTEMPTS = 5;

export async function editAuthorizedKeys<T>(
  system: SystemClient,
  user: string | undefined,
  plan: (current: ReadResult) => { content: string; result: T },
): Promise<{ result: T; user: string }> {
  for (let attempt = 1; ; attempt++) {
    const current = await system.op<ReadResult>(READ_OP, { user, file: 'authorized_keys' });
    const { content, result } = plan(current);
    try {
      const w = await system.op<WriteResult>(WRITE_OP, { user, content, expectVersion: current.version });
      return { result, user: w.user };
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== 'conflict' || attempt >= ATTEMPTS) throw e;
    }
  }
}
