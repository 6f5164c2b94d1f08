#!/usr/bin/env node
// Same-run baselines, in their own process like Lode: B0 a bare node:http server answering a small
// JSON document; B1 the same plus one primary-key read through `pg` (a pool, as Lode has); `git`
// the smallest CGI bridge to `git http-backend` serving the bare repositories under a directory
// (no authentication, no lookup, nothing recorded): what a clone costs with git alone.
// Usage: node bench/baseline-server.mjs <b0|b1|git> <port> [database url | repositories directory]
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import pg from 'pg';

const [mode, port, target] = process.argv.slice(2);
const pool = mode === 'b1' ? new pg.Pool({ connectionString: target, max: 10 }) : undefined;
const body = JSON.stringify({ id: 1, name: 'Project', path: 'project', visibility: 'public' });

/** git http-backend as a CGI: its header block parsed into the response, the rest streamed. */
function gitHttpBackend(req, res) {
  const url = new URL(req.url, 'http://x');
  const cgi = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: target,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      REQUEST_METHOD: req.method,
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      GIT_PROTOCOL: req.headers['git-protocol'] ?? '',
      HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
      ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  req.pipe(cgi.stdin);
  let head = Buffer.alloc(0);
  const onHead = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    cgi.stdout.off('data', onHead);
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const [name, ...rest] = line.split(':');
      const value = rest.join(':').trim();
      if (name.toLowerCase() === 'status') status = parseInt(value, 10);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
    cgi.stdout.pipe(res);
  };
  cgi.stdout.on('data', onHead);
}

createServer(async (req, res) => {
  if (mode === 'git') return gitHttpBackend(req, res);
  if (!pool) return res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  const id = Number(new URL(req.url, 'http://x').searchParams.get('id') ?? 1);
  const { rows } = await pool.query('select * from projects where id = $1', [id]);
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(rows[0] ?? null));
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
