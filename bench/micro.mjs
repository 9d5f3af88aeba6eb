#!/usr/bin/env node
// In-process micro benchmark of Switchyard's request path without sockets: fastify inject()
// of one request kind, sequentially, in batches; prints the best and median µs per request.
// Less noisy than a loopback load test on a shared machine; use it to compare two builds:
//   SWITCHYARD_ROOT=DIR node bench/micro.mjs [modern-call|modern-list|session-call] [--batches N] [--per N] [--ops]
// --ops also runs the operational side (metrics, access log at warn so that it writes nothing,
// admin listener on a free port; tracing only if OTEL_* is set), to see what it costs.
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { modernRequest, sessionRequest } from './lib/mcp.mjs';

const ROOT = process.env.SWITCHYARD_ROOT ? resolve(process.env.SWITCHYARD_ROOT) : resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const what = argv.find((a) => !a.startsWith('--') && !/^\d+$/.test(a)) ?? 'modern-call';
const batches = Number(argv[argv.indexOf('--batches') + 1]) || 15;
const per = Number(argv[argv.indexOf('--per') + 1]) || 2000;
const { startGateway } = await import(pathToFileURL(join(ROOT, 'dist', 'src', 'gateway.js')).href);
const ops = argv.includes('--ops');
const gw = ops
  ? await startGateway({ port: 0, logLevel: 'warn', adminPort: 0 }, undefined, { operations: true, env: process.env })
  : await startGateway({ port: 0, logLevel: 'warn' });
const app = gw.http.app;
// The gateway listens on loopback, so Host must name the port it bound (inject() says localhost:80).
const host = `127.0.0.1:${app.server.address().port}`;
const kind = what.endsWith('list') ? 'tools/list' : 'tools/call';
let req;
if (what.startsWith('session')) {
  const init = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'm', version: '1' } },
    }),
  });
  const id = init.headers['mcp-session-id'];
  req = sessionRequest(kind, { id, version: '2025-11-25' });
} else req = modernRequest(kind);
const [pre, post] = req.body.split('"[<id>]"');
let n = 0;
const one = async () => {
  const r = await app.inject({ method: 'POST', url: '/mcp', headers: { ...req.headers, host }, payload: pre + ++n + post });
  if (r.statusCode !== 200) throw new Error(`HTTP ${r.statusCode}: ${r.body}`);
};
for (let i = 0; i < per; i++) await one(); // warm-up
const results = [];
for (let b = 0; b < batches; b++) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < per; i++) await one();
  results.push(Number(process.hrtime.bigint() - t) / 1e3 / per);
}
results.sort((a, b) => a - b);
console.log(
  `${what}${ops ? ' --ops' : ''}: best ${results[0].toFixed(1)} µs/req, median ${results[results.length >> 1].toFixed(1)} µs/req (${batches} × ${per}, inject, no sockets)`,
);
await gw.close();
process.exit(0);
