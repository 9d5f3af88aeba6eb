// deploy/nginx/switchyard.conf under the real nginx: `nginx -t` accepts it inside a minimal main
// config (temp prefix, replicas on loopback), and proxying through it shows what docs/scaling.md
// relies on: round robin with no stickiness, the X-Forwarded-* headers, HTTP/1.1 keepalive to the
// replicas, and SSE events passed on unbuffered.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { request } from 'undici';
import { DEPLOY_NGINX_CONF, deployNginxConfig, freePort, NGINX_BIN as NGINX, runNginx } from '../helpers/nginx.js';

type T = { after(fn: () => void | Promise<void>): void };

const CONF = DEPLOY_NGINX_CONF;
const wrap = deployNginxConfig;

interface Seen {
  replica: number;
  headers: http.IncomingHttpHeaders;
  httpVersion: string;
}

/**
 * Three loopback "replicas" that record what reaches them. /sse writes event 1, and each further
 * event only after the client has called `release()` for the one before; after event 3 it ends.
 */
async function replicas(t: T) {
  const seen: Seen[] = [];
  const connections = [0, 0, 0];
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  let released = 0;
  const release = () => {
    released++;
    for (const w of waiting.splice(0))
      if (w.n <= released) w.resolve();
      else waiting.push(w);
  };
  const next = (n: number) => (released >= n ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ n, resolve })));
  const servers = [0, 1, 2].map((i) =>
    http.createServer((req, res) => {
      seen.push({ replica: i, headers: req.headers, httpVersion: req.httpVersion });
      if (req.url === '/sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        void (async () => {
          for (let n = 1; n <= 3; n++) {
            if (n > 1) await next(n - 1);
            res.write(`event: message\ndata: ${n}\n\n`);
          }
          res.end();
        })();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ replica: i }));
    }),
  );
  servers.forEach((s, i) => s.on('connection', () => connections[i]++));
  const ports: number[] = [];
  for (const s of servers) {
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    ports.push((s.address() as net.AddressInfo).port);
  }
  t.after(async () => {
    for (let n = 0; n < 3; n++) release();
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });
  return { seen, connections, ports, release };
}

test('nginx -t accepts deploy/nginx/switchyard.conf in a minimal main config', async (t) => {
  const { dir, main } = wrap(t, await freePort(), [await freePort(), await freePort(), await freePort()]);
  const r = spawnSync(NGINX, ['-t', '-p', dir, '-e', `${dir}/error.log`, '-c', main], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /syntax is ok/);
  assert.match(r.stderr, /test is successful/);
});

test('the shipped directives: HTTP/1.1, Connection "", no buffering, long read timeout, no stickiness', () => {
  const directives = CONF.split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
  for (const d of [
    'proxy_http_version 1.1;',
    'proxy_set_header Connection "";',
    'proxy_buffering off;',
    'proxy_request_buffering off;',
    'proxy_read_timeout 1h;',
    'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    'proxy_set_header X-Forwarded-Proto $scheme;',
    'proxy_set_header X-Forwarded-Host $http_host;',
    'proxy_set_header X-Forwarded-Prefix /;',
  ])
    assert.ok(directives.includes(d), d);
  for (const sticky of [/^ip_hash\b/, /^hash\b/, /^sticky\b/, /^least_conn\b/, /^random\b/, /\bproxy_cookie_/])
    assert.equal(
      directives.some((d) => sticky.test(d)),
      false,
      String(sticky),
    );
});

test('through nginx: round robin whatever the session, X-Forwarded-* set, keepalive HTTP/1.1 to each replica', async (t) => {
  const rep = await replicas(t);
  const port = await freePort();
  const { dir, main } = wrap(t, port, rep.ports);
  await runNginx(t, main, dir, port);
  const got: number[] = [];
  for (let i = 0; i < 6; i++) {
    // The same session id and a cookie on every request: no replica is pinned.
    const res = await request(`http://127.0.0.1:${port}/everything/mcp`, {
      headers: { 'mcp-session-id': 'v1.k1.same-session', cookie: 'route=replica-0', 'x-forwarded-for': '203.0.113.9' },
    });
    assert.equal(res.statusCode, 200);
    got.push(((await res.body.json()) as { replica: number }).replica);
  }
  assert.deepEqual(
    [0, 1, 2].map((r) => got.filter((g) => g === r).length),
    [2, 2, 2],
  );
  for (const s of rep.seen) {
    assert.equal(s.httpVersion, '1.1');
    assert.equal(s.headers.connection, undefined);
    assert.equal(s.headers.host, `127.0.0.1:${port}`);
    assert.equal(s.headers['x-forwarded-host'], `127.0.0.1:${port}`);
    assert.equal(s.headers['x-forwarded-proto'], 'http');
    assert.equal(s.headers['x-forwarded-prefix'], '/');
    // Appended, not replaced: Switchyard must trust only the last hop (nginx's own view).
    assert.equal(s.headers['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
    assert.equal(s.headers['mcp-session-id'], 'v1.k1.same-session');
  }
  // Keepalive: each replica saw one connection for its two requests.
  assert.deepEqual(rep.connections, [1, 1, 1]);
});

test('through nginx: the access log names the path without its query, so an HTTP+SSE session id stays out of it', async (t) => {
  const rep = await replicas(t);
  const port = await freePort();
  const { dir, main } = wrap(t, port, rep.ports);
  await runNginx(t, main, dir, port);
  const secret = 'sess-5f0c1d9e-0b7a-4e43-9d0e-2c6a0f1b7e11';
  const res = await request(`http://127.0.0.1:${port}/messages?sessionId=${secret}`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(res.statusCode, 200);
  await res.body.dump();
  // The replica got the query (it needs it); the log line is written as the request ends.
  assert.ok(rep.seen.length === 1);
  let log = '';
  for (let i = 0; i < 50 && !log.includes('/messages'); i++) {
    await new Promise((r) => setTimeout(r, 20));
    log = existsSync(`${dir}/access.log`) ? readFileSync(`${dir}/access.log`, 'utf8') : '';
  }
  assert.match(log, /"POST \/messages HTTP\/1\.1" 200 /);
  assert.ok(!log.includes(secret), 'no session id in the access log');
  assert.ok(!log.includes('sessionId'), 'no query in the access log');
});

test('through nginx: an SSE event reaches the client while the replica still holds the stream open', async (t) => {
  const rep = await replicas(t);
  const port = await freePort();
  const { dir, main } = wrap(t, port, rep.ports);
  await runNginx(t, main, dir, port);
  const res = await request(`http://127.0.0.1:${port}/sse`, { headers: { accept: 'text/event-stream' } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/event-stream');
  let text = '';
  let read = 0;
  // The replica writes each event only after the client has read the one before: a proxy that held
  // events back would stall here, and the test would time out.
  for await (const chunk of res.body) {
    text += (chunk as Buffer).toString('utf8');
    const events = text.split('\n\n').length - 1;
    while (read < events) {
      read++;
      rep.release();
    }
  }
  assert.equal(text, 'event: message\ndata: 1\n\nevent: message\ndata: 2\n\nevent: message\ndata: 3\n\n');
});
