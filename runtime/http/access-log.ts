/**
 * Log lines are batched and written once per tick-ish interval: one write per request cost ~6%
 * of a cheap request when stdout is a file or the journal's pipe.
 */
export interface BufferedWriter {
  write(chunk: string): void;
  flush(): void;
}

export function bufferedWriter(out: (chunk: string) => void, intervalMs = 50, maxBytes = 64 * 1024): BufferedWriter {
  let buf = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buf === '') return;
    const chunk = buf;
    buf = '';
    out(chunk);
  };
  return {
    write(chunk) {
      buf += chunk;
      if (buf.length >= maxBytes) flush();
      else if (!timer) timer = setTimeout(flush, intervalMs).unref();
    },
    flush,
  };
}

/** The old plain access log (`<ISO time> <text>` lines), kept for callers that still want it. */
export interface AccessLog {
  line(text: string): void;
  flush(): void;
}

export function bufferedAccessLog(write: (chunk: string) => void, intervalMs = 50, maxBytes = 64 * 1024): AccessLog {
  const w = bufferedWriter(write, intervalMs, maxBytes);
  // the ISO time is built once per millisecond, not once per line
  let stampMs = 0;
  let stamp = '';
  return {
    line(text) {
      const now = Date.now();
      if (now !== stampMs) {
        stampMs = now;
        stamp = new Date(now).toISOString();
      }
      w.write(`${stamp} ${text}\n`);
    },
    flush: w.flush,
  };
}
