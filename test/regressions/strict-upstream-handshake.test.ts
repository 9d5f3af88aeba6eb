// Strict mode checks an upstream's handshake (the InitializeResult or DiscoverResult it answers,
// the `initialize`, `server/discover` and `notifications/initialized` Switchyard sends) against
// the schema of the revision it speaks (docs/strict.md, "Upstreams"). Before, only a call's
// messages were (README "Not yet"): a serverInfo without `version`, a DiscoverResult without
// `cacheScope`, or a client's malformed capability Switchyard declared upstream in its
// `initialize`, went unsaid.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { everythingStdioCommand, gateway, REPO_ROOT, type TestGateway } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';

const SLOPPY = path.join(REPO_ROOT, 'test/fixtures/sloppy-handshake-server.mjs');

interface Violation {
  direction: string;
  era: string;
  method: string;
  path: string;
  message: string;
}

/** Every strict-mode violation the gateway logged, in order. */
const violations = (gw: TestGateway): Violation[] => gw.records.filter((r) => r.msg === 'strict: schema violation').map((r) => r.strict as Violation);

test('--strict: a stdio child’s InitializeResult whose serverInfo has no version is logged from-upstream, method initialize, and the child still serves', async (t) => {
  const gw = await gateway(t, { strict: 'log', stdio: `"${process.execPath}" "${SLOPPY}"` });
  const handshake = new Set(['initialize', 'notifications/initialized', 'server/discover']);
  assert.deepEqual(
    violations(gw)
      .filter((v) => handshake.has(v.method))
      .map((v) => [v.direction, v.era, v.method, v.path, v.message]),
    [['from-upstream', '2025-11-25', 'initialize', '/result/serverInfo', "InitializeResult: must have required property 'version'"]],
  );
  const h = await initSession(gw.url, '2025-11-25');
  const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ok', arguments: {} } }, h);
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /called ok/);
});

test('--strict: a 2026-07-28 stdio child’s DiscoverResult without cacheScope is logged from-upstream, method server/discover', async (t) => {
  const gw = await gateway(t, { strict: 'log', stdio: `"${process.execPath}" "${SLOPPY}" modern` });
  assert.deepEqual(
    violations(gw).map((v) => [v.direction, v.era, v.method, v.path, v.message]),
    [['from-upstream', '2026-07-28', 'server/discover', '/result', "DiscoverResult: must have required property 'cacheScope'"]],
  );
});

test('--strict: the initialize Switchyard sends an HTTP upstream for a client session is checked to-upstream: a client’s malformed capability, served in log mode, shows in and again to-upstream', async (t) => {
  const inner = await gateway(t, { stdio: everythingStdioCommand() });
  const gw = await gateway(t, { strict: 'log', upstreamUrl: inner.url, upstreamEra: '2025-11-25' });
  const before = violations(gw).length;
  // ClientCapabilities.sampling is an object; per-session isolation declares the client's own capabilities upstream.
  const h = await initSession(gw.url, '2025-11-25', { sampling: 5 });
  const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }, h);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    violations(gw)
      .slice(before)
      .map((v) => [v.direction, v.era, v.method, v.path]),
    [
      ['in', '2025-11-25', 'initialize', '/params/capabilities/sampling'],
      ['to-upstream', '2025-11-25', 'initialize', '/params/capabilities/sampling'],
    ],
  );
});
