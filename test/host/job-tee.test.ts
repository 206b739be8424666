/**
 * What a job keeps of a streamed answer (runtime/jobs/tee.ts): the client gets every piece as it
 * comes; the job's copy is the whole text up to its bound in UTF-8 bytes, past it only the size;
 * a client that goes away leaves the job reading to the end; a producer that fails is null.
 */
import { describe, expect, it } from 'vitest';
import { teeChunks, type TeeEnd } from '../../runtime/jobs/tee';

async function* pieces(list: string[], failAt = -1): AsyncGenerator<string> {
  for (let i = 0; i < list.length; i++) {
    if (i === failAt) throw new Error('walk failed');
    yield list[i];
  }
}

const read = async (it: AsyncIterable<string>, take = Infinity) => {
  const got: string[] = [];
  for await (const p of it) {
    got.push(p);
    if (got.length >= take) break;
  }
  return got;
};

describe('teeChunks', () => {
  it('keeps the whole text up to the bound, counted in UTF-8 bytes', async () => {
    const ends: (TeeEnd | null)[] = [];
    // 'é' is 2 bytes: 3 + 4 = 7 bytes, exactly the bound
    const client = await read(teeChunks(pieces(['abc', 'éé']), (e) => ends.push(e), 7));
    expect(client).toEqual(['abc', 'éé']);
    expect(ends).toEqual([{ text: 'abcéé' }]);
  });

  it('past the bound keeps only the size, and the client still gets every piece', async () => {
    const ends: (TeeEnd | null)[] = [];
    const client = await read(teeChunks(pieces(['abc', 'éé', 'x']), (e) => ends.push(e), 6));
    expect(client).toEqual(['abc', 'éé', 'x']);
    expect(ends).toEqual([{ tooLarge: 8 }]);
  });

  it('a synchronous iterable works the same', async () => {
    const ends: (TeeEnd | null)[] = [];
    expect(await read(teeChunks(['a', 'b'], (e) => ends.push(e), 10))).toEqual(['a', 'b']);
    expect(ends).toEqual([{ text: 'ab' }]);
  });

  it('a client that goes away: the job reads on to the end, with the same bound', async () => {
    const kept = new Promise<TeeEnd | null>((resolve) => {
      void read(teeChunks(pieces(['ab', 'cd', 'ef']), resolve, 100), 1);
    });
    expect(await kept).toEqual({ text: 'abcdef' });
    const big = new Promise<TeeEnd | null>((resolve) => {
      void read(teeChunks(pieces(['ab', 'cd', 'ef']), resolve, 5), 1);
    });
    expect(await big).toEqual({ tooLarge: 6 });
  });

  it('a producer that fails part way ends the job with null, and the client sees the failure', async () => {
    const ends: (TeeEnd | null)[] = [];
    await expect(read(teeChunks(pieces(['a', 'b'], 1), (e) => ends.push(e), 10))).rejects.toThrow('walk failed');
    expect(ends).toEqual([null]);
    const gone = new Promise<TeeEnd | null>((resolve) => {
      void read(teeChunks(pieces(['a', 'b', 'c'], 2), resolve, 10), 1);
    });
    expect(await gone).toBeNull();
  });
});
