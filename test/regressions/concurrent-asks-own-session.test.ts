// Regression: an HTTP+SSE upstream's messages name no request of ours, so a server request it
// sent while two calls of one client session were in flight could not be tied to either call, and
// was answered -32603 (`Switchyard cannot route this request to a client`): "sole" is never
// guessed. Under `isolation: per-session` that upstream session serves one client session, which
// is the only client the request can mean; it now goes to that session on its own stream, as a
// request outside any call does (2025-11-25 basic/transports#listening-for-messages-from-the-server;
// client/elicitation), and the client's answer goes back upstream.
// Upstream: a hand-made 2024-11-05 HTTP+SSE server whose `hold` tool answers only after its
// `elicitation/create`, which it sends once two calls are in flight.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { gateway } from '../helpers/gateway.js';
import { listenForTest } from '../helpers/stub-http.js';

const ASK = {
  id: 'ask-1',
  method: 'elicitation/create',
  params: { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
};

/** Reads one JSON body. */
function body(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => resolve(text ? (JSON.parse(text) as Record<string, unknown>) : {}));
  });
}

/**
 * A 2024-11-05 HTTP+SSE server: `GET /sse` opens a session; `tools/call` of `hold` is held; with
 * two held it sends {@link ASK} on the session's stream, and the answer to it (whatever it is,
 * recorded in `answers`) releases every held call.
 */
async function holdingUpstream(t: { after(fn: () => Promise<void>): void }) {
  const answers: Array<Record<string, unknown>> = [];
  const streams = new Map<string, { write: (m: Record<string, unknown>) => void; held: unknown[] }>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const id = randomUUID();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`event: endpoint\ndata: /messages?sessionId=${id}\n\n`);
      streams.set(id, { write: (m) => res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...m })}\n\n`), held: [] });
      req.on('close', () => streams.delete(id));
      return;
    }
    void body(req).then((m) => {
      const s = streams.get(url.searchParams.get('sessionId') ?? '');
      if (req.method !== 'POST' || !s) return void res.writeHead(404).end();
      res.writeHead(202).end();
      if (m.method === 'initialize')
        return s.write({ id: m.id, result: { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'holding', version: '1.0.0' } } });
      if (m.method === undefined) {
        answers.push(m);
        for (const id of s.held.splice(0)) s.write({ id, result: { content: [{ type: 'text', text: 'released' }] } });
        return;
      }
      if (m.id === undefined) return;
      if (m.method === 'tools/list') return s.write({ id: m.id, result: { tools: [{ name: 'hold', inputSchema: { type: 'object' } }] } });
      if (m.method === 'tools/call') {
        s.held.push(m.id);
        if (s.held.length === 2) s.write(ASK);
        return;
      }
      return s.write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    });
  });
  return { url: `${await listenForTest(t, server)}/sse`, answers };
}

test('per-session HTTP+SSE upstream: an elicitation sent while two calls of one client session are in flight reaches that client, and its answer goes upstream', async (t) => {
  const up = await holdingUpstream(t);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2024-11-05' });
  const asked: unknown[] = [];
  const client = new Client({ name: 'two-calls', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params);
    return { action: 'accept', content: { name: 'Ada' } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => client.close());

  const results = await Promise.all([client.callTool({ name: 'hold', arguments: {} }), client.callTool({ name: 'hold', arguments: {} })]);
  assert.deepEqual(up.answers, [{ jsonrpc: '2.0', id: 'ask-1', result: { action: 'accept', content: { name: 'Ada' } } }]);
  assert.deepEqual(asked, [ASK.params]);
  for (const r of results) assert.deepEqual(r.content, [{ type: 'text', text: 'released' }]);
});
