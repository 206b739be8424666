// The baseline: a bare node:http server answering fixed bytes with the same headers as the host.
import http from 'node:http';
const [port, bodyFile] = process.argv.slice(2);
const body = Buffer.from(await (await import('node:fs/promises')).readFile(bodyFile));
http
  .createServer((req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'access-control-allow-origin': '*',
      'x-powered-by': 'Ballast',
      'content-length': body.length,
    });
    res.end(body);
  })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
