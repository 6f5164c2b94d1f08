#!/usr/bin/env node
// Same-run baselines, in their own process like Lode: B0 a bare node:http server answering a small
// JSON document; B1 the same plus one primary-key read through `pg` (a pool, as Lode has).
// Usage: node bench/baseline-server.mjs <b0|b1> <port> [database url]
import { createServer } from 'node:http';
import pg from 'pg';

const [mode, port, databaseUrl] = process.argv.slice(2);
const pool = mode === 'b1' ? new pg.Pool({ connectionString: databaseUrl, max: 10 }) : undefined;
const body = JSON.stringify({ id: 1, name: 'Project', path: 'project', visibility: 'public' });

createServer(async (req, res) => {
  if (!pool) return res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  const id = Number(new URL(req.url, 'http://x').searchParams.get('id') ?? 1);
  const { rows } = await pool.query('select * from projects where id = $1', [id]);
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(rows[0] ?? null));
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
