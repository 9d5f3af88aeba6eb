// Strict mode checks an upstream's handshake (the InitializeResult or DiscoverResult it answers,
// the `initialize`, `server/discover` and `notifications/initialized` Switchyard sends) and what
// it sends outside any call (list changes, resource updates, log messages no call asked for,
// server requests no call owns), against the schema of the revision it speaks (docs/strict.md,
// "Upstreams"). Before, only a call's messages were (README "Not yet"): a serverInfo without
// `version`, a DiscoverResult without `cacheScope`, a client's malformed capability Switchyard
// declared upstream in its `initialize`, or a list change whose params are not an object, went
// unsaid.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { everythingStdioCommand, gateway, REPO_ROOT, type TestGateway } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';
import { until } from '../helpers/replicas.js';
import { stubHttp } from '../helpers/stub-http.js';

const SLOPPY = path.join(REPO_ROOT, 'test/fixtures/sloppy-handshake-server.mjs');
const SCRIPTED = path.join(REPO_ROOT, 'test/fixtures/scripted-server.mjs');

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

test('--strict: a stdio child’s malformed messages outside a call (notifications, server requests no call owns) are logged from-upstream; the answers Switchyard gives them are well formed', async (t) => {
  const gw = await gateway(t, { strict: 'log', stdio: `"${process.execPath}" "${SLOPPY}"` });
  // The roots/list request comes last and is refused (no call owns it on a shared child): once that is logged, all before it was routed.
  await until(() => gw.records.some((r) => r.msg === 'upstream message has no client' && r.method === 'roots/list'), 'the child’s roots/list to be refused');
  assert.deepEqual(
    violations(gw).map((v) => [v.direction, v.era, v.method, v.path, v.message]),
    [
      ['from-upstream', '2025-11-25', 'initialize', '/result/serverInfo', "InitializeResult: must have required property 'version'"],
      ['from-upstream', '2025-11-25', 'notifications/tools/list_changed', '/params', 'ToolListChangedNotification: must be object'],
      ['from-upstream', '2025-11-25', 'notifications/message', '/params', "LoggingMessageNotification: must have required property 'level'"],
      ['from-upstream', '2025-11-25', 'notifications/resources/updated', '/params', "ResourceUpdatedNotification: must have required property 'uri'"],
      ['from-upstream', '2025-11-25', 'notifications/progress', '/params/progress', 'ProgressNotification: must be number'],
      ['from-upstream', '2025-11-25', 'notifications/cancelled', '/params/reason', 'CancelledNotification: must be string'],
      ['from-upstream', '2025-11-25', 'ping', '/params', 'PingRequest: must be object'],
      ['from-upstream', '2025-11-25', 'roots/list', '/params', 'ListRootsRequest: must be object'],
    ],
  );
  // Logging only: the child still serves.
  const h = await initSession(gw.url, '2025-11-25');
  const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ok', arguments: {} } }, h);
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /called ok/);
});

test('--strict: well-formed upstreams’ handshakes and messages outside a call log nothing (server-everything, a 2026-07-28 child, HTTP upstreams of each era)', async (t) => {
  // server-everything sends log messages and resource updates of its own outside any call.
  const everything = await gateway(t, { strict: 'log', stdio: everythingStdioCommand() });
  const h = await initSession(everything.url, '2025-11-25');
  const r = await post(everything.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }, h);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(violations(everything), []);

  const modern = await gateway(t, { strict: 'log', stdio: `"${process.execPath}" "${SCRIPTED}" modern` });
  assert.deepEqual(violations(modern), []);

  // A second gateway fronts server-everything over HTTP, in each HTTP era.
  const inner = await gateway(t, { stdio: everythingStdioCommand(), dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  for (const upstreamEra of ['2026-07-28', '2025-11-25', '2024-11-05'] as const) {
    const url = upstreamEra === '2024-11-05' ? `${new URL(inner.url).origin}/sse` : inner.url;
    const gw = await gateway(t, { strict: 'log', upstreamUrl: url, upstreamEra });
    assert.deepEqual(violations(gw), [], upstreamEra);
  }
});

test('--strict: a 2025-11-25 HTTP upstream’s malformed InitializeResult and a malformed list change on its GET stream are logged from-upstream', async (t) => {
  const stub = await stubHttp(t, (req, res, m) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: 'x' })}\n\n`);
      return; // held open, as a GET stream is
    }
    if (req.method !== 'POST' || m?.id === undefined) return void res.writeHead(req.method === 'POST' ? 202 : 200).end();
    const result =
      m.method === 'initialize'
        ? { protocolVersion: '2025-11-25', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'stub' } }
        : m.method === 'tools/list'
          ? { tools: [] }
          : {};
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
  });
  const gw = await gateway(t, { strict: 'log', upstreamUrl: stub.url, upstreamEra: '2025-11-25' });
  await until(() => violations(gw).some((v) => v.method === 'notifications/tools/list_changed'), 'the list change to be checked');
  assert.deepEqual(
    violations(gw).map((v) => [v.direction, v.era, v.method, v.path, v.message]),
    [
      ['from-upstream', '2025-11-25', 'initialize', '/result/serverInfo', "InitializeResult: must have required property 'version'"],
      ['from-upstream', '2025-11-25', 'notifications/tools/list_changed', '/params', 'ToolListChangedNotification: must be object'],
    ],
  );
});

test('--strict: a malformed list change on a 2026-07-28 HTTP upstream’s listen stream is logged from-upstream; its well-formed DiscoverResult is not', async (t) => {
  const stub = await stubHttp(t, (req, res, m) => {
    if (m?.method === 'subscriptions/listen') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: 'x' })}\n\n`);
      return; // held open, as a listen is
    }
    if (m?.method !== 'server/discover') return void res.writeHead(404).end();
    const result = {
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: { listChanged: true } },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'stub', version: '1.0.0' } },
      ttlMs: 0,
      cacheScope: 'private',
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
  });
  const gw = await gateway(t, { strict: 'log', upstreamUrl: stub.url, upstreamEra: '2026-07-28' });
  await until(() => violations(gw).some((v) => v.method === 'notifications/tools/list_changed'), 'the list change to be checked');
  assert.deepEqual(
    violations(gw).map((v) => [v.direction, v.era, v.method, v.path, v.message]),
    [['from-upstream', '2026-07-28', 'notifications/tools/list_changed', '/params', 'ToolListChangedNotification: must be object']],
  );
});
