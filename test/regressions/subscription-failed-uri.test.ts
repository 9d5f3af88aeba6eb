// Regression (found by h-secrets): when a subscription could not be sent to an HTTP upstream, the
// `upstream subscription failed` line (warn) logged the resource URI whole. A URI can be a signed
// URL whose query is its credential (`?X-Amz-Signature=`, `?sig=`), which is why spans never
// record `mcp.resource.uri` (docs/operations.md). The line now shows the URI as a stdio child's
// arguments are shown: its userinfo and credential-named query values `[redacted]`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { initSession, openSse, post } from '../helpers/http.js';
import { everythingHttp } from '../helpers/servers.js';
import { interceptingProxy } from '../helpers/stub-http.js';

const SIG = 'PLANTEDSIGNATURE77c2';

test('a subscription the upstream connection drops: the warn line names the URI with its signature redacted', async (t) => {
  const s = await everythingHttp(t, 'streamableHttp');
  const to = new URL(s.url);
  // In front of server-everything: a resources/subscribe POST loses its connection.
  const origin = await interceptingProxy(t, to, (_req, body, res) => {
    if (!body.includes('"resources/subscribe"')) return false;
    res.destroy();
    return true;
  });
  const gw = await gateway(t, { upstreamUrl: `${origin}/mcp` });
  const h = await initSession(gw.url, '2025-11-25');
  const uri = `https://bucket.example/report.pdf?X-Amz-Expires=60&X-Amz-Signature=${SIG}`;
  // Its GET stream is what takes resource updates: the subscription goes upstream for it.
  const stream = await openSse(gw.url, 'GET', { ...h, accept: 'text/event-stream' });
  t.after(() => stream.close());
  await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri } }, h);
  const failed = () => gw.records.find((r) => r.msg === 'upstream subscription failed');
  for (let i = 0; i < 200 && !failed(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(failed()?.uri, 'https://bucket.example/report.pdf?X-Amz-Expires=60&X-Amz-Signature=[redacted]');
  assert.doesNotMatch(JSON.stringify(gw.records), new RegExp(SIG));
});
