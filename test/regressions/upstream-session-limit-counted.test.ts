// Regression (a known defect left open, fixed by h-small): SWY_ERR_SESSION_LIMIT thrown by an HTTP
// upstream's session pool (no room for the upstream session a request needs: here the streams of
// an HTTP+SSE upstream hold every place) was answered (503 with Retry-After, or in-band on the
// HTTP+SSE stream) but not counted in switchyard_refusals_total nor listed in /status.json's
// refusals, while the refusals of every other bound are. It is now counted once per refused
// request, with its code, the mount and the client's dialect, on every door.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initSession, messagesUntilResponse, modernBody, modernHeaders, openHttpSseSession, post, send } from '../helpers/http.js';
import { configGateway, countedRefusals, getText } from '../helpers/ops.js';
import { everythingHttp } from '../helpers/servers.js';

const echo = (id: number, message: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } });
const FULL = 'Too many sessions: upstream ev: 3 HTTP+SSE sessions open, the rest of its maxUpstreamConnections kept for their messages';

test('an upstream pool refusal (SWY_ERR_SESSION_LIMIT) is counted once per request on every door', { timeout: 60_000 }, async (t) => {
  const ev = await everythingHttp(t, 'sse');
  // Four connections: three places for HTTP+SSE streams (the gateway's control stream and two sessions).
  const gw = await configGateway(
    t,
    {
      admin: { port: 0 },
      dialects: { legacySse: true },
      upstreams: { ev: { url: ev.url, limits: { maxUpstreamConnections: 4, requestTimeoutMs: 5_000 } } },
    },
    { operations: true },
  );
  const admin = gw.admin!.address().url;
  const sessions = [await initSession(gw.url), await initSession(gw.url), await initSession(gw.url)];
  for (const [i, h] of sessions.slice(0, 2).entries()) assert.equal((await post(gw.url, echo(1, `s${i}`), h)).status, 200);

  // 2025-03-26: a lone JSON reply, 503.
  const s2025 = await post(gw.url, echo(1, 's2'), sessions[2]);
  assert.deepEqual([s2025.status, s2025.json], [503, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: FULL } }]);
  // 2026-07-28: its own upstream session (per principal and capabilities), refused the same.
  const modern = await post(gw.url, modernBody(2, 'tools/call', { name: 'echo', arguments: { message: 'm' } }), modernHeaders('tools/call', 'echo'));
  assert.deepEqual([modern.status, modern.json], [503, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: FULL } }]);
  // 2024-11-05 HTTP+SSE: accepted 202, the refusal on the stream.
  const legacy = await openHttpSseSession(t, gw.url.replace(/\/mcp$/, ''));
  const posted = await send(legacy.to, 'POST', JSON.stringify(echo(3, 'l')), { 'content-type': 'application/json' });
  assert.equal(posted.status, 202);
  const onStream = await messagesUntilResponse(legacy.sse, 3);
  assert.deepEqual(onStream.at(-1), { jsonrpc: '2.0', id: 3, error: { code: -32000, message: FULL } });

  const exposition = (await getText(`${admin}metrics`)).text;
  assert.deepEqual(
    countedRefusals(exposition).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    [
      [{ code: 'SWY_ERR_SESSION_LIMIT', mount: 'ev', dialect: '2024-11-05' }, 1],
      [{ code: 'SWY_ERR_SESSION_LIMIT', mount: 'ev', dialect: '2025-03-26' }, 1],
      [{ code: 'SWY_ERR_SESSION_LIMIT', mount: 'ev', dialect: '2026-07-28' }, 1],
    ],
  );
  const status = (await getText(`${admin}status.json`)).json as { refusals: Array<Record<string, unknown>> };
  assert.deepEqual(
    status.refusals
      .map(({ code, status: s, mount, dialect }) => ({ code, status: s, mount, dialect }))
      .sort((a, b) => String(a.dialect).localeCompare(String(b.dialect))),
    ['2024-11-05', '2025-03-26', '2026-07-28'].map((dialect) => ({ code: 'SWY_ERR_SESSION_LIMIT', status: 503, mount: 'ev', dialect })),
  );
});
