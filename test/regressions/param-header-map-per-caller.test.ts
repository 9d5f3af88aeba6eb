// Regression (a known defect left open, fixed by h-small): the 2026-07-28 door learns which tools
// carry x-mcp-header annotations from a tools/list run on a tools/call's behalf, which policy
// filters for that caller; the map was kept for every caller. A tool hidden from the first caller
// was missing from it, so a later caller who may see the tool had its Mcp-Param-* headers left
// unchecked until the map was refreshed (60 s or a list change). A server MUST reject a request
// whose Mcp-Param-* header does not match the body (2026-07-28 server/tools#x-mcp-header;
// basic/transports/streamable-http, Server validation). Two API-key principals, the embedded
// demo's `lookup` tool (`region` annotated `Region`), a policy rule hiding it from alpha.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/auth/api-keys.js';
import { modernBody, modernHeaders, post, type RawResponse } from '../helpers/http.js';
import { gatewayFromConfig } from '../helpers/identity.js';

const ALPHA = 'sy_live_alpha_0123456789abcdefghijklmnop';
const BETA = 'sy_live_beta_0123456789abcdefghijklmnopq';

const config = {
  auth: {
    apiKeys: [
      { name: 'alpha', sha256: hashApiKey(ALPHA) },
      { name: 'beta', sha256: hashApiKey(BETA) },
    ],
  },
  policy: { default: 'allow', rules: [{ name: 'no-lookup-for-alpha', effect: 'deny', when: "principal.sub == 'alpha' && component.name == 'lookup'" }] },
  upstreams: { demo: { transport: 'embedded' } },
};

function call(url: string, id: number, key: string, name: string, args: Record<string, unknown>, extra: Record<string, string> = {}): Promise<RawResponse> {
  return post(url, modernBody(id, 'tools/call', { name, arguments: args }), { ...modernHeaders('tools/call', name), authorization: `Bearer ${key}`, ...extra });
}

/** Beta's lookup with Mcp-Param-Region `us` for `region: 'eu'`: the status and body. */
async function betaMismatch(url: string, id: number): Promise<[number, unknown]> {
  const r = await call(url, id, BETA, 'lookup', { region: 'eu', key: 'k' }, { 'mcp-param-region': 'us' });
  return [r.status, r.json];
}

const refused = (id: number) => [
  400,
  { jsonrpc: '2.0', id, error: { code: -32020, message: 'Header mismatch: Mcp-Param-Region differs from arguments.region' } },
];

test('beta first: a mismatching Mcp-Param-Region on a tool beta may see is refused', async (t) => {
  const gw = await gatewayFromConfig(t, config);
  assert.deepEqual(await betaMismatch(gw.urls[0], 1), refused(1));
});

test('alpha first (lookup hidden from alpha): beta is refused just the same, and alpha still gets the denial', async (t) => {
  const gw = await gatewayFromConfig(t, config);
  const url = gw.urls[0];
  const first = await call(url, 1, ALPHA, 'echo', { message: 'a' });
  assert.deepEqual((first.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: a' }]);
  assert.deepEqual(await betaMismatch(url, 2), refused(2));
  // Beta's matching header still goes through; alpha's view is alpha's own (its lookup is denied,
  // not refused for a header it cannot know about).
  const ok = await call(url, 3, BETA, 'lookup', { region: 'eu', key: 'k' }, { 'mcp-param-region': 'eu' });
  assert.equal(ok.status, 200);
  const alpha = await call(url, 4, ALPHA, 'lookup', { region: 'eu', key: 'k' }, { 'mcp-param-region': 'us' });
  assert.equal((alpha.json as { error: { code: number } }).error.code, -32010);
});
