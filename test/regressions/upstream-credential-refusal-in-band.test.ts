// Docs fix (found by h-trial8): docs/security.md said a token-exchange upstream called without an
// OAuth access token "is 403 SWY_ERR_AUTH_NO_SUBJECT_TOKEN" and token endpoint failures "are 502
// SWY_ERR_AUTH_UPSTREAM_TOKEN". Both come after authentication and admission, from the upstream
// call, so they are answered in-band like any call's error (docs/errors.md, first paragraph):
// HTTP 200 on a 2026-07-28 and on a 2025 JSON reply. This pins what the page now says.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startAuthServer } from '../fixtures/auth-server.js';
import { gatewayFromConfig, modernCall, openSession, sessionHeaders } from '../helpers/identity.js';
import { post } from '../helpers/http.js';
import { modernHttp } from '../helpers/servers.js';

const KEY = 'api-key-for-the-ci-runner-0123456789';

test('a token-exchange upstream called with an API key: SWY_ERR_AUTH_NO_SUBJECT_TOKEN in-band, HTTP 200, in both eras', async (t) => {
  const as = await startAuthServer(t);
  const up = await modernHttp(t);
  const { clientId, clientSecret } = as.confidentialClient;
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer }, apiKeys: [{ name: 'ci', sha256: createHash('sha256').update(KEY).digest('hex') }] },
    upstreams: { up: { url: up.url, era: '2026-07-28', credentials: { tokenExchange: { issuer: as.issuer, clientId, clientSecret, resource: up.url } } } },
  });
  const url = gw.urls[0];
  const error = { code: -32000, message: "Forbidden: this upstream needs the caller's OAuth access token" };
  const modern = await modernCall(url, 1, 'tools/call', { name: 'echo', arguments: { message: 'x' } }, `Bearer ${KEY}`);
  assert.equal(modern.status, 200);
  assert.deepEqual(modern.json, { jsonrpc: '2.0', id: 1, error });
  const sid = await openSession(url, `Bearer ${KEY}`);
  const legacy = await post(
    url,
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } },
    sessionHeaders(sid, `Bearer ${KEY}`),
  );
  assert.equal(legacy.status, 200);
  assert.deepEqual(legacy.json, { jsonrpc: '2.0', id: 2, error });
});
