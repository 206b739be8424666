import http from 'node:http';

export interface RawGet {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** the body's bytes as they came (fetch would gunzip a gzip answer) */
  body: Buffer;
}

/** One GET (or HEAD) over node:http: the answer's status, headers and undecoded body bytes. */
export function rawGet(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawGet> {
  return new Promise((done, fail) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', fail);
    req.end();
  });
}
