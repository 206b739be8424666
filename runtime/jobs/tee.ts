/** How a streamed answer ended, for its job: its whole text, or only its size when that was more than the job keeps. */
export type TeeEnd = { text: string } | { tooLarge: number };

/**
 * A streamed answer (Reply.chunks) read by its client and kept by its job: each piece goes to
 * the client as it is made and into the job's copy, up to `keepBytes` (UTF-8); past that the copy
 * is dropped and only the size is counted, so a large answer (a 100k-entry explore is 57 MB of
 * JSON) never sits in the host's memory twice. A client that goes away does not stop the job: the
 * rest is read here, to the end. `onEnd` gets the text or the size, or null when the producer
 * failed part way.
 */
export function teeChunks(
  chunks: Iterable<string> | AsyncIterable<string>,
  onEnd: (end: TeeEnd | null) => void,
  keepBytes: number,
): AsyncIterable<string> {
  const it: Iterator<string> | AsyncIterator<string> =
    Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : chunks[Symbol.iterator]();
  let kept: string[] | null = [];
  let bytes = 0;
  let ended = false;
  const keep = (piece: string) => {
    bytes += Buffer.byteLength(piece);
    if (kept && bytes > keepBytes) kept = null;
    kept?.push(piece);
  };
  const finish = (end: TeeEnd | null) => {
    if (ended) return;
    ended = true;
    onEnd(end);
  };
  const whole = (): TeeEnd => (kept ? { text: kept.join('') } : { tooLarge: bytes });
  const drain = async () => {
    try {
      for (;;) {
        const next = await it.next();
        if (next.done) break;
        keep(next.value);
      }
      finish(whole());
    } catch {
      finish(null);
    }
  };
  return (async function* () {
    let complete = false;
    try {
      for (;;) {
        const next = await it.next();
        if (next.done) break;
        keep(next.value);
        yield next.value;
      }
      complete = true;
      finish(whole());
    } catch (e) {
      complete = true;
      finish(null);
      throw e;
    } finally {
      // the client went away (return() before the end): the job reads on by itself
      if (!complete) void drain();
    }
  })();
}
