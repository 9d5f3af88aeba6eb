// Regression (an open item of the refusal notes, checked by h-refuse2): a 2025 session whose
// request needs a new upstream session when the upstream has no room for one (SWY_ERR_SESSION_LIMIT:
// the pool's sessions all have subscribers, or an HTTP+SSE upstream's streams hold every place) got
// the refusal in-band, HTTP 200, without the Retry-After its catalogue entry gives; the 2026-07-28
// door answers the same refusal 503 with Retry-After. The refusal comes before anything is sent
// upstream, so it is now 503 with Retry-After on a lone JSON reply, as SWY_ERR_ADMISSION_BUSY is.
// The other half of the note was already so: an `initialize` refused because the session table is
// full is 503 with Retry-After (rules.test.ts, retry-after.test.ts); the second test checks that
// the official v1 client fails its connect cleanly on it (an error, no hang, no session).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { initSession, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';
import { everythingHttp } from '../helpers/servers.js';

const echo = (id: number, message: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } });

test('a 2025 session request refused for want of an upstream session is 503 with Retry-After on its lone JSON reply', { timeout: 60_000 }, async (t) => {
  const ev = await everythingHttp(t, 'sse');
  // Four connections: three places for HTTP+SSE streams, the gateway's control stream and two sessions.
  const gw = await configGateway(t, { upstreams: { ev: { url: ev.url, limits: { maxUpstreamConnections: 4, requestTimeoutMs: 5_000 } } } });
  const sessions = [await initSession(gw.url), await initSession(gw.url), await initSession(gw.url)];
  for (const [i, h] of sessions.slice(0, 2).entries()) assert.equal((await post(gw.url, echo(1, `s${i}`), h)).status, 200);

  const full = await post(gw.url, echo(1, 's2'), sessions[2]);
  assert.equal(full.status, 503, full.text);
  assert.equal(full.headers['retry-after'], '1');
  assert.equal(full.headers['content-type'], 'application/json');
  assert.equal(full.headers['mcp-session-id'], sessions[2]['mcp-session-id']);
  assert.deepEqual(full.json, {
    jsonrpc: '2.0',
    id: 1,
    error: {
      code: -32000,
      message: 'Too many sessions: upstream ev: 3 HTTP+SSE sessions open, the rest of its maxUpstreamConnections kept for their messages',
    },
  });

  // A place that frees is taken by the session's next request: the refusal was retryable.
  await fetch(gw.url, { method: 'DELETE', headers: sessions[0] });
  let again = await post(gw.url, echo(2, 's2 again'), sessions[2]);
  for (let i = 0; i < 50 && again.status === 503; i++) {
    await new Promise((r) => setTimeout(r, 100));
    again = await post(gw.url, echo(2, 's2 again'), sessions[2]);
  }
  assert.deepEqual([again.status, again.json], [200, { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'Echo: s2 again' }] } }]);
});

test('the official v1 client fails its connect cleanly on an initialize refused 503 because the session table is full', async (t) => {
  const gw = await configGateway(t, { limits: { maxSessions: 1 }, upstreams: { demo: { transport: 'embedded' } } });
  const first = await initSession(gw.url);
  const transport = new StreamableHTTPClientTransport(new URL(gw.url));
  const client = new Client({ name: 'session-limit-test', version: '1.0.0' });
  t.after(() => client.close());
  const refused = await client.connect(transport).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(refused instanceof StreamableHTTPError, String(refused));
  assert.equal(refused.code, 503);
  assert.match(refused.message, /"message":"Too many sessions"/);
  assert.equal(transport.sessionId, undefined);
  // The one session is still served.
  assert.equal((await post(gw.url, echo(3, 'first'), first)).status, 200);
});
