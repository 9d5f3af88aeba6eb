// CORS on a path no mount serves (docs/security.md, "CORS"): a preflight there, and any other
// request, gets the 404 it always had with no `Access-Control-*` field. The standalone listener's
// live mount table takes every path on one catch-all route, whose first hook set the fields of a
// listed origin before it knew whether the path was served: a page could read the 404 of any path.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { send, type RawResponse } from '../helpers/http.js';
import { gatewayFromConfig } from '../helpers/identity.js';

const PAGE = 'http://localhost:5173';

/** The `access-control-*` and `vary` fields of an answer. */
function corsOf(r: RawResponse): Record<string, unknown> {
  return Object.fromEntries(Object.entries(r.headers).filter(([k]) => k.startsWith('access-control-') || k === 'vary'));
}

test('a path no mount serves: 404 without CORS fields, for a preflight and a GET alike; a served path keeps them', async (t) => {
  const gw = await gatewayFromConfig(t, {
    cors: { origins: [PAGE] },
    dialects: { modern: true, streamable: true, legacySse: false },
    upstreams: { a: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const origin = new URL(url).origin;
  for (const target of [`${origin}/nowhere`, `${origin}/b/mcp`, `${origin}/a/sse`, `${origin}/sse`]) {
    const pre = await send(target, 'OPTIONS', undefined, { origin: PAGE, 'access-control-request-method': 'POST' });
    assert.equal(pre.status, 404, target);
    assert.deepEqual(corsOf(pre), {}, `preflight ${target}`);
    const get = await send(target, 'GET', undefined, { origin: PAGE, accept: 'text/event-stream' });
    assert.equal(get.status, 404, target);
    assert.deepEqual(corsOf(get), {}, `GET ${target}`);
  }
  // The served path still answers the preflight 204 and carries the fields on a refusal.
  const pre = await send(url, 'OPTIONS', undefined, { origin: PAGE, 'access-control-request-method': 'POST' });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers['access-control-allow-origin'], PAGE);
  const put = await send(url, 'PUT', undefined, { origin: PAGE });
  assert.equal(put.status, 405);
  assert.equal(put.headers['access-control-allow-origin'], PAGE);
  assert.equal(put.headers.vary, 'Origin');
});
