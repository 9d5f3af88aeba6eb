// Found by a client-author trial (h-redir, 2026-12-06): the era probe followed same-origin
// redirects on its POSTs but not on its fallback GET, and the gateway's connectors used the
// configured URL whatever the probe had found. An upstream behind a same-origin 307 probed fine
// and then failed to start (Streamable HTTP), or failed its probe although a client following the
// redirect could use it (HTTP+SSE). The probe also re-POSTed on a 301/302/303 and named a
// cross-origin Location whole. One rule now holds for the probe's POSTs and GET and the HTTP+SSE
// stream: same-origin 307/308 only, at most 5 in a row; the connectors talk to where it led.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { operatorText } from '../../src/core/errors.js';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { connect } from '../helpers/clients.js';
import { gateway } from '../helpers/gateway.js';
import { everythingHttp, modernHttp } from '../helpers/servers.js';
import type { HttpUpstream } from '../../src/upstreams/http/index.js';
import { listenForTest, stubHttp } from '../helpers/stub-http.js';

const eras = await eraClients();

/**
 * A reverse proxy on 127.0.0.1 port 0 in front of `target`'s origin that answers `redirect`'s
 * redirects itself (same origin: its own) and passes everything else on, streams included.
 */
async function front(
  t: { after(fn: () => Promise<void>): void },
  target: string,
  redirect: (method: string, path: string) => { status: number; location: string } | undefined,
): Promise<string> {
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    const r = redirect(req.method ?? '', req.url ?? '');
    if (r) return void req.resume().on('end', () => res.writeHead(r.status, { location: r.location }).end());
    const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      // A stream's headers go on at once, as the server sent them, not with its first event.
      res.flushHeaders();
      ur.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  return listenForTest(t, server);
}

test('Streamable HTTP behind a same-origin 307: the gateway starts on it and calls a tool', async (t) => {
  const s = await everythingHttp(t, 'streamableHttp');
  const origin = await front(t, s.url, (_m, p) => (p === '/old' ? { status: 307, location: '/mcp' } : undefined));
  const gw = await gateway(t, { upstreamUrl: `${origin}/old` });
  const client = await connect('v1-streamable', gw.url);
  t.after(() => client.close());
  const r = await client.callTool({ name: 'echo', arguments: { message: 'through the redirect' } });
  assert.equal(r.content?.[0]?.text, 'Echo: through the redirect');
  const probed = gw.records.find((x) => x.msg === 'upstream probed');
  assert.equal(probed?.redirected, true);
});

test('HTTP+SSE whose GET answers a same-origin 308: the probe follows it, and the gateway serves it', async (t) => {
  const s = await everythingHttp(t, 'sse');
  // The POSTs to /old-sse go on to server-everything, which answers 404: the fallback GET follows.
  const origin = await front(t, s.url, (m, p) => (m === 'GET' && p === '/old-sse' ? { status: 308, location: '/sse' } : undefined));
  const v = await probeUrl(`${origin}/old-sse`, eras);
  assert.equal(v.ok, true, v.reason);
  assert.equal(v.transport, 'http+sse');
  assert.equal(v.url, `${origin}/sse`);
  assert.deepEqual(v.steps.map((x) => `${x.request} ${x.status} ${x.note}`).slice(2, 4), [
    'GET /old-sse (Accept: text/event-stream) 308 same-origin redirect to /sse',
    `GET /sse (Accept: text/event-stream) 200 ${v.steps[3].note}`,
  ]);
  const gw = await gateway(t, { upstreamUrl: `${origin}/old-sse` });
  const client = await connect('v1-streamable', gw.url);
  t.after(() => client.close());
  const r = await client.callTool({ name: 'echo', arguments: { message: 'sse' } });
  assert.equal(r.content?.[0]?.text, 'Echo: sse');
});

// A pinned era skips the probe: the connector's own first request (server/discover, a session's
// initialize) follows the rule, and the connector then talks to where it led.
for (const pinned of ['2025-11-25', '2026-07-28'] as const) {
  test(`a pinned ${pinned} upstream behind a same-origin 307: the connector follows it and calls a tool`, async (t) => {
    const s = pinned === '2026-07-28' ? await modernHttp(t) : await everythingHttp(t, 'streamableHttp');
    let redirected = 0;
    const origin = await front(t, s.url, (_m, p) => (p === '/old' ? (redirected++, { status: 307, location: '/mcp' }) : undefined));
    const gw = await gateway(t, { upstreamUrl: `${origin}/old`, upstreamEra: pinned, requireUpstreams: true });
    assert.equal((gw.upstreams.get('default') as HttpUpstream).era, pinned);
    const client = await connect(pinned === '2026-07-28' ? 'v2-2026' : 'v1-streamable', gw.url);
    t.after(() => client.close());
    const r = await client.callTool({ name: 'echo', arguments: { message: 'pinned' } });
    assert.match(String(r.content?.[0]?.text), /pinned/);
    // Once: the connector's first request; every later one goes to /mcp.
    assert.equal(redirected, 1);
  });
}

test('a pinned upstream whose first POST is sent to another origin does not start, naming that origin only', async (t) => {
  const s = await stubHttp(t, (_req, res) => res.writeHead(308, { location: 'http://127.0.0.2:1/mcp?api_key=secret' }).end());
  await assert.rejects(gateway(t, { upstreamUrl: s.url, upstreamEra: '2026-07-28', requireUpstreams: true }), (err: Error) => {
    // The message (what a client may read) names no origin; the operator's text names both.
    assert.equal(
      err.message,
      "Upstream protocol error: HTTP 308 redirect to another origin not followed: the request's headers and credentials go to the configured origin only (upstream default)",
    );
    assert.equal(
      operatorText(err),
      `Upstream protocol error: ${new URL(s.url).origin}: HTTP 308 redirect to another origin (http://127.0.0.2:1) not followed: the request's headers and credentials go to ${new URL(s.url).origin} only; use the other URL itself if you trust it (upstream default)`,
    );
    return true;
  });
  assert.deepEqual(s.seen, ['POST /mcp server/discover']);
});

test('a 302 to a POST is not followed (it would turn into a GET): the reason says to use 307/308 or the URL itself', async (t) => {
  const s = await stubHttp(t, (_req, res) => res.writeHead(302, { location: '/v2/mcp' }).end());
  const v = await probeUrl(s.url, eras);
  assert.equal(v.ok, false);
  assert.deepEqual(s.seen, ['POST /mcp server/discover']);
  assert.equal(
    v.reason,
    'no usable answer to server/discover: HTTP 302 redirect not followed: only 307 and 308 keep the method and body (RFC 9110 §15.4); use the URL it names itself',
  );
  assert.equal(v.steps[0].note, 'redirect to /v2/mcp refused: only 307 and 308 are followed');
});

test('a cross-origin redirect, on a POST or on the fallback GET, is refused and names the other origin only', async (t) => {
  const post = await stubHttp(t, (_req, res) => res.writeHead(307, { location: 'http://127.0.0.2:1/mcp?access_token=secret' }).end());
  const v = await probeUrl(post.url, eras);
  assert.equal(v.ok, false);
  assert.equal(
    v.reason,
    `no usable answer to server/discover: HTTP 307 redirect to another origin (http://127.0.0.2:1) not followed: the request's headers and credentials go to ${new URL(post.url).origin} only; use the other URL itself if you trust it`,
  );
  const get = await stubHttp(t, (req, res) => {
    if (req.method === 'POST') return res.writeHead(404).end();
    res.writeHead(307, { location: 'http://127.0.0.2:1/sse' }).end();
  });
  const w = await probeUrl(get.url, eras);
  assert.equal(w.ok, false);
  assert.deepEqual(get.seen, ['POST /mcp server/discover', 'POST /mcp initialize', 'GET /mcp']);
  assert.match(String(w.reason), /^HTTP 307 redirect to another origin \(http:\/\/127\.0\.0\.2:1\) not followed/);
  assert.equal(w.steps[2].note, 'redirect to another origin (http://127.0.0.2:1) refused: only same-origin redirects are followed');
});

test('a GET that redirects to itself stops after 5 redirects', async (t) => {
  const s = await stubHttp(t, (req, res) => {
    if (req.method === 'POST') return res.writeHead(405).end();
    res.writeHead(307, { location: '/mcp' }).end();
  });
  const v = await probeUrl(s.url, eras);
  assert.equal(v.ok, false);
  assert.equal(v.reason, 'more than 5 redirects');
  assert.equal(s.seen.filter((x) => x === 'GET /mcp').length, 6);
});
