import { describe, expect, it } from 'vitest';
import { ReplyBatch } from '../../runtime/http/reply-batch';

/** A batch whose "socket writes" go to a log, with the turn's flush awaited by `turn()`. */
function logged() {
  const log: string[] = [];
  const batch = new ReplyBatch<string, string>((res, reply) => {
    if (reply === 'throws') throw new Error(`cannot write ${res}`);
    log.push(`write ${res}:${reply}`);
  });
  const done = (res: string) => (e?: unknown) => log.push(e ? `failed ${res}: ${(e as Error).message}` : `done ${res}`);
  return { log, batch, done };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('ReplyBatch: the answers of one event-loop turn are written together', () => {
  it('holds the answers of a turn until its flush, then writes them in order, each followed by its done', async () => {
    const { log, batch, done } = logged();
    batch.arrive();
    batch.write('a', '200', done('a'));
    batch.arrive();
    batch.write('b', '404', done('b'));
    expect(log).toEqual([]);
    expect(batch.waiting).toBe(2);
    await turn();
    expect(log).toEqual(['write a:200', 'done a', 'write b:404', 'done b']);
    expect(batch.waiting).toBe(0);
  });

  it('writes at once an answer made after the flush in the same check phase (an audit commit released it)', async () => {
    const { log, batch, done } = logged();
    batch.arrive(); // the flush's immediate is queued first, as a request's is before its audit batch's
    const later = new Promise<void>((r) =>
      setImmediate(() => {
        batch.write('c', '200', done('c'));
        log.push('returned');
        r();
      }),
    );
    await later;
    expect(log).toEqual(['write c:200', 'done c', 'returned']);
  });

  it('holds answers again once a request of a new turn arrives', async () => {
    const { log, batch, done } = logged();
    batch.arrive();
    await turn();
    batch.write('d', '200', done('d')); // after the flush: at once
    expect(log).toEqual(['write d:200', 'done d']);
    batch.arrive(); // the next turn's request
    batch.write('e', '200', done('e'));
    expect(log).toEqual(['write d:200', 'done d']);
    await turn();
    expect(log).toEqual(['write d:200', 'done d', 'write e:200', 'done e']);
  });

  it('flushes an answer that came without a request of its turn (never left waiting)', async () => {
    const { log, batch, done } = logged();
    batch.write('f', '200', done('f'));
    expect(log).toEqual([]);
    await turn();
    expect(log).toEqual(['write f:200', 'done f']);
  });

  it('a write that throws reaches its own done as the error; the answers after it are still written', async () => {
    const { log, batch, done } = logged();
    batch.arrive();
    batch.write('g', 'throws', done('g'));
    batch.write('h', '200', done('h'));
    await turn();
    expect(log).toEqual(['failed g: cannot write g', 'write h:200', 'done h']);
  });
});
