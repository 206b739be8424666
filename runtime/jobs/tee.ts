/**
 * A streamed answer (Reply.chunks) read by its client and kept by its job: each piece goes to
 * the client as it is made and into the job's copy. A client that goes away does not stop the
 * job: the rest is read here, to the end. `onEnd` gets the whole text, or null when the
 * producer failed part way.
 */
export function teeChunks(
  chunks: Iterable<string> | AsyncIterable<string>,
  onEnd: (text: string | null) => void,
): AsyncIterable<string> {
  const it: Iterator<string> | AsyncIterator<string> =
    Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : chunks[Symbol.iterator]();
  const kept: string[] = [];
  let ended = false;
  const finish = (text: string | null) => {
    if (ended) return;
    ended = true;
    onEnd(text);
  };
  const drain = async () => {
    try {
      for (;;) {
        const next = await it.next();
        if (next.done) break;
        kept.push(next.value);
      }
      finish(kept.join(''));
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
        kept.push(next.value);
        yield next.value;
      }
      complete = true;
      finish(kept.join(''));
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
