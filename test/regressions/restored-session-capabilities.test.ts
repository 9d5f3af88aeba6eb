// Regression: a 2025 session rebuilt on another replica from its sealed id (cluster) carried the
// capabilities its client declared, unfiltered, where the replica that opened it carried what
// `initialize` made of them (those of the session's revision, without `tasks`). So the upstream
// session the second replica opened for the same client session was told `tasks` (its server may
// then send task-augmented requests whose `tasks/get` nobody answers) and capabilities the
// session's revision does not define. Found reviewing `ClientSession.restore` while making a
// session keep `roots.listChanged` for its own upstream sessions. Now both carry the same.
// Upstream: a hand-made 2025-11-25 Streamable HTTP server that records each session's
// `initialize` capabilities; two replicas share a real Redis.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { post } from '../helpers/http.js';
import { startRedis } from '../helpers/redis.js';
import { startReplica } from '../helpers/replicas.js';
import { listenForTest } from '../helpers/stub-http.js';

const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } as const;

/** A 2025-11-25 server by hand that offers no GET stream and records, per session, its client's name and capabilities. */
async function recordingUpstream(t: { after(fn: () => Promise<void>): void }): Promise<{ url: string; told: Array<{ name: string; caps: unknown }> }> {
  const told: Array<{ name: string; caps: unknown }> = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
      const m = JSON.parse(text) as { id?: number | string; method?: string; params?: { capabilities?: unknown; clientInfo?: { name: string } } };
      if (m.id === undefined) return void res.writeHead(202).end();
      const json = (result: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(200, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
      };
      if (m.method === 'initialize') {
        told.push({ name: m.params!.clientInfo!.name, caps: m.params!.capabilities });
        return json(
          { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'recording', version: '1.0.0' } },
          { 'mcp-session-id': randomUUID() },
        );
      }
      return json({ tools: [] });
    });
  });
  return { url: `${await listenForTest(t, server)}/mcp`, told };
}

test('a session restored on another replica tells its upstream session what the replica that opened it told its own', async (t) => {
  const up = await recordingUpstream(t);
  const redis = await startRedis(t);
  const config = { upstreams: { up: { url: up.url, era: '2025-11-25' } } };
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url, config });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url, config });

  const declared = { roots: { listChanged: true }, tasks: { list: {}, requests: { elicitation: { create: {} } } }, elicitation: {} };
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: declared, clientInfo: { name: 'restored', version: '1' } },
  };
  const opened = await post(a.url, init, H);
  assert.equal(opened.status, 200, opened.text);
  const h = { ...H, 'mcp-session-id': String(opened.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' };
  assert.equal((await post(a.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status, 202);

  // One call through each replica: each opens its own upstream session for this client session.
  for (const [i, r] of [a, b].entries()) assert.equal((await post(r.url, { jsonrpc: '2.0', id: i + 1, method: 'tools/list' }, h)).status, 200);

  const expected = { roots: { listChanged: true }, elicitation: {} };
  assert.deepEqual(
    up.told.filter((x) => x.name === 'restored').map((x) => x.caps),
    [expected, expected],
  );
});
