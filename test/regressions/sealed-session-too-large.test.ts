// Found by a trial (2026-12): with `cluster` set, an initialize whose client name is 5,000
// characters and whose capabilities are empty was refused with "client capabilities need a session
// id of 6929 characters": the size came from the client info, which the message did not name. It
// now names both parts with their JSON sizes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { post } from '../helpers/http.js';
import { startReplica } from '../helpers/replicas.js';

const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } as const;

test('a sealed session refused for a long client name names the client info and its size, not the capabilities', async (t) => {
  const r = await startReplica(t, { id: 'replica-a' });
  const name = 'n'.repeat(5_000);
  const res = await post(
    r.url,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name, version: '1' } } },
    { ...H },
  );
  assert.equal(res.status, 400);
  assert.equal(res.headers['mcp-session-id'], undefined);
  const infoChars = JSON.stringify({ name, version: '1' }).length;
  const body = res.json as { jsonrpc: string; id: number; error: { code: number; message: string } };
  assert.equal(body.error.code, -32602);
  const m = new RegExp(
    `^Session state too large: client info \\(${infoChars} characters of JSON\\) and capabilities \\(2 characters\\) need a session id of (\\d+) characters, limit 4096$`,
  ).exec(body.error.message);
  assert.ok(m, body.error.message);
  assert.ok(Number(m[1]) > 4096, m[1]);
});
