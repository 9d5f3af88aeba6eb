// Strict mode: client messages validated both ways against the era's official JSON schema.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { CLIENT_KINDS, connect } from '../helpers/clients.js';
import { initSession, messagesUntilResponse, modernBody, modernHeaders, openHttpSseSession, openSse, parseSse, post, send } from '../helpers/http.js';

const violations = (records: Array<Record<string, unknown>>) => records.filter((r) => r.msg === 'strict: schema violation').map((r) => r.strict);

test('--strict: the official clients of every era cause no violation', async (t) => {
  const gw = await gateway(t, { strict: 'log', dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  for (const kind of CLIENT_KINDS) {
    const c = await connect(kind, gw.url);
    t.after(() => c.close());
    await c.listTools();
    await c.callTool({ name: 'echo', arguments: { message: 'x' } });
    await c.callTool({ name: 'slow', arguments: { steps: 2, stepMs: 1 } }, { onprogress: () => {} });
    // A 2024-11-05 client is never sent elicitation/create (it does not exist before 2025-06-18).
    if (kind === 'v1-sse-2024') await assert.rejects(c.callTool({ name: 'ask', arguments: {} }), { code: -32602 });
    else await c.callTool({ name: 'ask', arguments: {} });
    await c.close();
  }
  assert.deepEqual(violations(gw.records), []);
});

test('--strict: server-everything’s resource links reach each revision as its own schema has them (text before 2025-06-18), with no violation', async (t) => {
  const gw = await gateway(t, { strict: 'log', stdio: everythingStdioCommand(), dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const call = { name: 'get-resource-links', arguments: { count: 1 } };
  const answers: Record<string, Array<Record<string, unknown>>> = {};
  // 2024-11-05 over HTTP+SSE: the answer arrives as a `message` event.
  const old = await openHttpSseSession(t, new URL(gw.url).origin);
  assert.equal(
    (await send(old.to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }), { 'content-type': 'application/json' })).status,
    202,
  );
  answers['2024-11-05'] = ((await messagesUntilResponse(old.sse, 1)).at(-1) as { result: { content: Array<Record<string, unknown>> } }).result.content;
  for (const rev of ['2025-03-26', '2025-06-18', '2025-11-25']) {
    const h = await initSession(gw.url, rev);
    const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }, h);
    const reply = (r.json ??
      parseSse(r.text)
        .map((e) => JSON.parse(e.data) as Record<string, unknown>)
        .find((m) => m.id === 1)) as { result: { content: Array<Record<string, unknown>> } };
    answers[rev] = reply.result.content;
  }
  const r = await post(gw.url, modernBody(1, 'tools/call', call), modernHeaders('tools/call', call.name));
  answers['2026-07-28'] = (r.json as { result: { content: Array<Record<string, unknown>> } }).result.content;

  const link = answers['2026-07-28'][1] as { type: string; name: string; uri: string; mimeType: string; description: string };
  assert.equal(link.type, 'resource_link', 'server-everything sends a resource_link');
  for (const rev of ['2025-06-18', '2025-11-25']) assert.deepEqual(answers[rev], answers['2026-07-28'], `${rev} has resource_link`);
  for (const rev of ['2024-11-05', '2025-03-26'])
    assert.deepEqual(answers[rev][1], { type: 'text', text: `Resource link: ${link.name} <${link.uri}> (${link.mimeType})\n${link.description}` }, rev);
  assert.deepEqual(violations(gw.records), []);
});

test('--strict=log: a hand-made invalid message is logged with direction, era, method and JSON path, and still served', async (t) => {
  const gw = await gateway(t, { strict: 'log' });
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: 'not an object' }), modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 200);
  const v = violations(gw.records) as Array<{ direction: string; era: string; method: string; path: string; message: string }>;
  assert.ok(v.length >= 1);
  assert.deepEqual(
    { direction: v[0].direction, era: v[0].era, method: v[0].method, path: v[0].path },
    { direction: 'in', era: '2026-07-28', method: 'tools/call', path: '/params/arguments' },
  );
  assert.match(v[0].message, /^CallToolRequest: must be object$/);
});

test('--strict=reject: an invalid client message is refused with -32602 and the path', async (t) => {
  const gw = await gateway(t, { strict: 'reject' });
  const r = await post(gw.url, modernBody(7, 'tools/call', { name: 'echo', arguments: 'not an object' }), modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 400);
  assert.deepEqual(r.json, {
    jsonrpc: '2.0',
    id: 7,
    error: { code: -32602, message: 'Invalid message: does not match the protocol schema: /params/arguments: CallToolRequest: must be object' },
  });
  // A 2025 session too (the error travels in-band).
  const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await post(
    gw.url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    H,
  );
  const sh = { ...H, 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
  const bad = await post(gw.url, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: 5 } }, sh);
  assert.deepEqual(bad.json, {
    jsonrpc: '2.0',
    id: 8,
    error: { code: -32602, message: 'Invalid message: does not match the protocol schema: /params/arguments: CallToolRequest: must be object' },
  });
  const ok = await post(gw.url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: { message: 'fine' } } }, sh);
  assert.deepEqual((ok.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: fine' }]);
});

test('--strict=reject refuses an invalid initialize too: a 2025 POST gets 400 and no session, an HTTP+SSE stream the error event', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const gw = await gateway(t, { strict: 'reject', dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] }, records);
  const bad = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: 'x', clientInfo: { name: 5 } } };
  const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const r = await post(gw.url, bad, H);
  assert.equal(r.status, 400);
  assert.equal(r.headers['mcp-session-id'], undefined);
  const err = (r.json as { id: unknown; error: { code: number; message: string } }).error;
  assert.equal((r.json as { id: unknown }).id, 0);
  assert.equal(err.code, -32602);
  assert.match(err.message, /^Invalid message: does not match the protocol schema: \/params\//);
  // Every violation is still logged.
  const paths = violations(records).map((v) => (v as { path: string }).path);
  for (const p of ['/params/capabilities', '/params/clientInfo/name']) assert.ok(paths.includes(p), `${p} in ${JSON.stringify(paths)}`);

  const legacy = await openSse(gw.url.replace(/\/mcp$/, '/sse'), 'GET', { accept: 'text/event-stream' });
  t.after(() => legacy.close());
  const endpoint = new URL((await legacy.next()).data, gw.url).href;
  const accepted = await post(endpoint, { ...bad, params: { ...bad.params, protocolVersion: '2024-11-05' } }, { 'content-type': 'application/json' });
  assert.equal(accepted.status, 202);
  const ev = JSON.parse((await legacy.next()).data) as { id: unknown; error?: { code: number }; result?: unknown };
  assert.equal(ev.id, 0);
  assert.equal(ev.result, undefined);
  assert.equal(ev.error?.code, -32602);
  // A valid initialize on the same stream then opens the session.
  const good = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  assert.equal((await post(endpoint, good, { 'content-type': 'application/json' })).status, 202);
  const ok = JSON.parse((await legacy.next()).data) as { id: unknown; result?: { protocolVersion?: string } };
  assert.deepEqual([ok.id, ok.result?.protocolVersion], [1, '2024-11-05']);
});
