// Strict mode checks what an upstream sends for a call against the schema of the revision it
// speaks (docs/strict.md, "Upstreams"). Before, it checked only messages between clients and the
// gateway (README "Not yet"), so an upstream's result that is no CallToolResult of its revision
// (here a text block with no `text`) or a progress notification without `progress` went unsaid
// unless a client's own check happened to catch what the gateway made of it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { everythingStdioCommand, gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, post } from '../helpers/http.js';

const MALFORMED = path.join(REPO_ROOT, 'test/fixtures/malformed-server.mjs');

test('--strict: an upstream result and notification that do not match the upstream’s revision are logged with direction from-upstream, and still served', async (t) => {
  const gw = await gateway(t, { strict: 'log', stdio: `"${process.execPath}" "${MALFORMED}"` });
  const upstreamViolations = () =>
    gw.records.filter((r) => r.msg === 'strict: schema violation' && (r.strict as { direction: string }).direction === 'from-upstream').map((r) => r.strict);
  const h = await initSession(gw.url, '2025-11-25');
  const ok = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ok', arguments: {} } }, h);
  assert.equal(ok.status, 200);
  assert.deepEqual(upstreamViolations(), [], 'a valid result is said nothing of');

  const bad = await post(
    gw.url,
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'text-without-text', arguments: {}, _meta: { progressToken: 'p' } } },
    h,
  );
  assert.equal(bad.status, 200, bad.text);
  const found = upstreamViolations() as Array<{ direction: string; era: string; method: string; path: string; message: string }>;
  assert.ok(
    found.some((v) => v.era === '2025-11-25' && v.method === 'notifications/progress' && v.path === '/params' && /progress/.test(v.message)),
    JSON.stringify(found),
  );
  assert.ok(
    found.some((v) => v.era === '2025-11-25' && v.method === 'tools/call' && v.path.startsWith('/result/content/0') && /CallToolResult/.test(v.message)),
    JSON.stringify(found),
  );
  // Logging only: the answer still reaches the client, as the upstream gave it.
  assert.match(bad.text, /"content":\[\{"type":"text"\}\]/);
});

test('--strict: an HTTP upstream’s invalid result is logged with its revision, for each HTTP era it is spoken in', async (t) => {
  // A second gateway fronts the malformed stdio server over HTTP and passes its result on as it is.
  const inner = await gateway(t, { stdio: `"${process.execPath}" "${MALFORMED}"`, dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  for (const [upstreamEra, era] of [
    ['2026-07-28', '2026-07-28'],
    ['2025-11-25', '2025-11-25'],
    ['2024-11-05', '2024-11-05'],
  ] as const) {
    const url = upstreamEra === '2024-11-05' ? `${new URL(inner.url).origin}/sse` : inner.url;
    const gw = await gateway(t, { strict: 'log', upstreamUrl: url, upstreamEra });
    const call = { name: 'text-without-text', arguments: {} };
    // A dual-era upstream is spoken to in the client's own era where it can be: a 2026-07-28 client here.
    const r =
      era === '2026-07-28'
        ? await post(gw.url, modernBody(1, 'tools/call', call), modernHeaders('tools/call', call.name))
        : await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }, await initSession(gw.url, '2025-11-25'));
    assert.equal(r.status, 200, r.text);
    const found = gw.records
      .filter((x) => x.msg === 'strict: schema violation' && (x.strict as { direction: string }).direction === 'from-upstream')
      .map((x) => x.strict as { era: string; method: string; path: string });
    assert.ok(
      found.some((v) => v.era === era && v.method === 'tools/call' && v.path.startsWith('/result/content/0')),
      `${upstreamEra}: ${JSON.stringify(found)}`,
    );
  }
});

test('--strict: what the gateway sends an upstream is checked too: a client’s invalid request, served in log mode, is flagged to-upstream', async (t) => {
  const gw = await gateway(t, { strict: 'log', stdio: everythingStdioCommand() });
  const h = await initSession(gw.url, '2025-11-25');
  // GetPromptRequest's arguments are strings: a number is the client's fault (in), and, forwarded as it is, ours toward the child.
  await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'simple-prompt', arguments: { x: 5 } } }, h);
  const seen = gw.records
    .filter((r) => r.msg === 'strict: schema violation')
    .map((r) => r.strict as { direction: string; era: string; method: string; path: string })
    .map((v) => [v.direction, v.era, v.method, v.path]);
  assert.deepEqual(seen, [
    ['in', '2025-11-25', 'prompts/get', '/params/arguments/x'],
    ['to-upstream', '2025-11-25', 'prompts/get', '/params/arguments/x'],
  ]);
  // A valid request sends nothing that is flagged.
  const before = gw.records.length;
  await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'simple-prompt', arguments: {} } }, h);
  assert.deepEqual(
    gw.records.slice(before).filter((r) => r.msg === 'strict: schema violation'),
    [],
  );
});
