// Regression: behind a proxy that strips a path prefix (nginx `location /tenant-7/ { proxy_pass
// http://upstream/; }`), an HTTP+SSE `endpoint` event of `/messages?sessionId=…` sent the
// client's POSTs outside the prefix. The relative reference, or the absolute one built from
// trusted X-Forwarded-* headers, keeps them under it. Real nginx, real node:http upstream.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { createPublicUrl, endpointReference, type TrustProxy } from '../../src/transports/public-url.js';
import { startNginx } from '../helpers/nginx.js';
import { openSse, send } from '../helpers/http.js';

interface Seen {
  method: string;
  url: string;
  forwarded: Record<string, string | undefined>;
}

/** A small HTTP+SSE upstream: GET /sse sends `endpoint` (as `endpointFor` says), POST /messages echoes the body as a `message` event. */
async function upstream(t: { after(fn: () => Promise<void>): void }, endpointFor: (req: http.IncomingMessage) => string) {
  const seen: Seen[] = [];
  const streams = new Map<string, http.ServerResponse>();
  const srv = http.createServer((req, res) => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      forwarded: Object.fromEntries(
        ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-prefix'].map((h) => [h, req.headers[h] as string | undefined]),
      ),
    });
    const url = new URL(req.url ?? '/', 'http://upstream');
    if (req.method === 'GET' && url.pathname === '/sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      streams.set('s1', res);
      res.write(`event: endpoint\ndata: ${endpointFor(req)}\n\n`);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const stream = streams.get(url.searchParams.get('sessionId') ?? '');
        if (!stream) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
        stream.write(`event: message\ndata: ${body}\n\n`);
      });
      return;
    }
    res.writeHead(404).end();
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(async () => {
    srv.closeAllConnections();
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  return { port: (srv.address() as net.AddressInfo).port, seen };
}

function viewOf(trustProxy: TrustProxy, req: http.IncomingMessage) {
  const pub = createPublicUrl({ trustProxy });
  return pub({ remoteAddress: req.socket.remoteAddress, headers: { get: (n) => req.headers[n] as string | undefined }, path: '/sse' });
}

const MESSAGE = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

/** Opens the stream through nginx, resolves the endpoint, POSTs to it and reads the echo. */
async function roundTrip(sseUrl: string): Promise<{ endpoint: string; resolved: string; postStatus: number; echoed: string }> {
  const sse = await openSse(sseUrl, 'GET', { accept: 'text/event-stream' });
  try {
    assert.equal(sse.status, 200);
    assert.equal(sse.headers['content-type'], 'text/event-stream');
    const ep = await sse.next();
    assert.equal(ep.event, 'endpoint');
    const resolved = new URL(ep.data, sseUrl).href;
    const r = await send(resolved, 'POST', MESSAGE, { 'content-type': 'application/json' });
    const echoed = r.status === 202 ? (await sse.next()).data : '';
    return { endpoint: ep.data, resolved, postStatus: r.status, echoed };
  } finally {
    sse.close();
  }
}

test('the relative endpoint reference resolves under the stripped prefix; the SDK-style absolute path does not', async (t) => {
  const up = await upstream(t, () => endpointReference('/sse', '/messages', 's1'));
  const ngx = await startNginx(t, { upstreamPort: up.port });
  const got = await roundTrip(`${ngx.url}sse`);
  assert.deepEqual(got, {
    endpoint: 'messages?sessionId=s1',
    resolved: `http://127.0.0.1:${ngx.port}/tenant-7/messages?sessionId=s1`,
    postStatus: 202,
    echoed: MESSAGE,
  });
  // nginx stripped the prefix and said so.
  assert.deepEqual(
    up.seen.map((s) => [s.method, s.url]),
    [
      ['GET', '/sse'],
      ['POST', '/messages?sessionId=s1'],
    ],
  );
  assert.deepEqual(up.seen[0].forwarded, {
    'x-forwarded-for': '127.0.0.1',
    'x-forwarded-proto': 'http',
    'x-forwarded-host': `127.0.0.1:${ngx.port}`,
    'x-forwarded-prefix': '/tenant-7',
  });

  // What the endpoint event used to carry: an absolute path, which leaves the prefix.
  const old = new URL('/messages?sessionId=s1', `${ngx.url}sse`).href;
  assert.equal(old, `http://127.0.0.1:${ngx.port}/messages?sessionId=s1`);
  const r = await send(old, 'POST', MESSAGE, { 'content-type': 'application/json' });
  assert.equal(r.status, 404);
  assert.equal(up.seen.length, 2);
});

test('with nginx trusted, the endpoint is the absolute public URL from X-Forwarded-*; untrusted, it stays relative', async (t) => {
  const up = await upstream(t, (req) => endpointReference('/sse', '/messages', 's1', viewOf(['127.0.0.1'], req)));
  const ngx = await startNginx(t, { upstreamPort: up.port });
  const want = `http://127.0.0.1:${ngx.port}/tenant-7/messages?sessionId=s1`;
  assert.deepEqual(await roundTrip(`${ngx.url}sse`), { endpoint: want, resolved: want, postStatus: 202, echoed: MESSAGE });

  const up2 = await upstream(t, (req) => endpointReference('/sse', '/messages', 's1', viewOf(['10.0.0.0/8'], req)));
  const ngx2 = await startNginx(t, { upstreamPort: up2.port, prefix: '/a/b/' });
  assert.deepEqual(await roundTrip(`${ngx2.url}sse`), {
    endpoint: 'messages?sessionId=s1',
    resolved: `http://127.0.0.1:${ngx2.port}/a/b/messages?sessionId=s1`,
    postStatus: 202,
    echoed: MESSAGE,
  });
});

test('nginx passes SSE events on unbuffered: each arrives while the stream stays open', async (t) => {
  const up = await upstream(t, () => endpointReference('/sse', '/messages', 's1'));
  const ngx = await startNginx(t, { upstreamPort: up.port });
  const sse = await openSse(`${ngx.url}sse`, 'GET', { accept: 'text/event-stream' });
  t.after(async () => sse.close());
  assert.deepEqual(await sse.next(), { event: 'endpoint', data: 'messages?sessionId=s1', id: undefined });
  for (const n of [1, 2, 3]) {
    const body = `{"jsonrpc":"2.0","id":${n},"method":"ping"}`;
    assert.equal((await send(`${ngx.url}messages?sessionId=s1`, 'POST', body, { 'content-type': 'application/json' })).status, 202);
    assert.deepEqual(await sse.next(), { event: 'message', data: body, id: undefined });
  }
});
