// Found by a client-author trial (helper h-t1, 2026-12-05): server-everything in streamableHttp
// mode (the official reference server, built like the SDK's documented Express example) answers a
// request naming a session it does not know with 400 and an error whose id is null ("Bad Request:
// No valid session ID provided"), not 404. After such an upstream restarted, the gateway kept
// sending the dead upstream session's id: every call of the 2025 sessions that had one, and every
// 2026-07-28 call (their shared upstream session), failed with `Upstream protocol error: JSON
// answer without the response`, those failures opened the circuit breaker, and the breaker's
// trial (a fresh probe) closed it only for the same stale sessions to open it again: the mount
// stayed down for every client, new ones included, until the gateway restarted.
// Now an error response with id null is the answer to the one request its POST carried (JSON-RPC
// 2.0 §5), and a 400 so answered to a request on an upstream session is treated as the session's
// loss, like a 404: the gateway initializes a new one, once, and sends the request again.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, post } from '../helpers/http.js';
import { everythingOnPort, freePort, stopChild } from '../helpers/servers.js';

type Answer = { status: number; result?: { content?: Array<{ text?: string }> }; error?: { code: number; message: string } };

const echo = (message: string) => ({ name: 'echo', arguments: { message } });

test('an upstream that restarted and answers 400 for its lost sessions: 2025 and 2026-07-28 calls go on, on new upstream sessions', async (t) => {
  const port = await freePort();
  let child = await everythingOnPort(port);
  t.after(() => stopChild(child));
  const gw = await gateway(t, { upstreamUrl: `http://127.0.0.1:${port}/mcp` });

  const h = await initSession(gw.url, '2025-11-25');
  const legacy = async (message: string): Promise<Answer> => {
    const r = await post(gw.url, { jsonrpc: '2.0', id: message, method: 'tools/call', params: echo(message) }, h);
    return { status: r.status, ...(r.json as object) };
  };
  const modern = async (message: string): Promise<Answer> => {
    const r = await post(gw.url, modernBody(message, 'tools/call', echo(message)), modernHeaders('tools/call', 'echo'));
    return { status: r.status, ...(r.json as object) };
  };
  assert.equal((await legacy('before')).result?.content?.[0].text, 'Echo: before');
  assert.equal((await modern('before')).result?.content?.[0].text, 'Echo: before');

  await stopChild(child);
  child = await everythingOnPort(port);

  // More calls than upstreamBreakerFailures (5): none fails, so the breaker never opens.
  for (let i = 0; i < 7; i++) {
    const a = await legacy(`after-${i}`);
    assert.equal(a.result?.content?.[0].text, `Echo: after-${i}`, `2025-11-25 call ${i}: ${JSON.stringify(a)}`);
    const m = await modern(`after-${i}`);
    assert.equal(m.result?.content?.[0].text, `Echo: after-${i}`, `2026-07-28 call ${i}: ${JSON.stringify(m)}`);
  }
});
