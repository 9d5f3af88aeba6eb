// Found by a client-author trial of `switchyard probe` (helper h-probe, 2026-12-05): a server
// whose InitializeResult settled on a revision Switchyard does not speak (`1999-01-01`) got the
// verdict `1999-01-01 over streamable-http` and exit 0, while the gateway fronting the same URL
// refused to start on it (`initialize settled on "1999-01-01", which Switchyard does not speak`).
// The server's answer is a counter-offer the client accepts or disconnects from
// (2025-11-25 basic/lifecycle#version-negotiation); the probe now names no era for it, over
// Streamable HTTP and over HTTP+SSE, and a dual-era check does not count such a session.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { CLI } from '../helpers/cli.js';
import { stubHttp, type StubMessage } from '../helpers/stub-http.js';

const eras = await eraClients();
const SPOKEN = '(it speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)';
const initResult = (id: unknown, protocolVersion: string) => ({
  jsonrpc: '2.0',
  id,
  result: { protocolVersion, capabilities: {}, serverInfo: { name: 'odd', version: '1' } },
});

/** A server on 127.0.0.1 port 0 (stubHttp); `handle` gets each request with its parsed POST body. The requests seen are listed. */
const server = (
  t: { after(fn: () => Promise<void>): void },
  handle: (req: http.IncomingMessage, res: http.ServerResponse, m: StubMessage | undefined) => void,
) => stubHttp(t, handle);

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

test('Streamable HTTP: an InitializeResult at 1999-01-01 is no era (CLI exit 1); the session is still ended', async (t) => {
  const s = await server(t, (req, res, m) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (m?.method === 'initialize') return json(res, 200, initResult(m.id, '1999-01-01'), { 'mcp-session-id': 'odd-1' });
    json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: no session' } });
  });
  const r = await promisify(execFile)(process.execPath, [CLI, 'probe', '--timeout-ms', '2000', s.url], { encoding: 'utf8' }).then(
    (x) => ({ code: 0, stdout: x.stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stdout, /^ {3}an InitializeResult at 1999-01-01, a revision Switchyard does not speak$/m);
  assert.ok(r.stdout.endsWith(`verdict: no era found: initialize settled on "1999-01-01", which Switchyard does not speak ${SPOKEN}\n`), r.stdout);
  assert.deepEqual(s.seen, ['POST /mcp server/discover', 'POST /mcp initialize', 'DELETE /mcp']);
});

test('HTTP+SSE: an initialize reply at 1999-01-01 on the stream is no era', async (t) => {
  let stream: http.ServerResponse | undefined;
  const s = await server(t, (req, res, m) => {
    if (req.method === 'GET') {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages?sessionId=odd\n\n');
      return;
    }
    if (req.url === '/mcp') return void res.writeHead(405, { allow: 'GET' }).end();
    res.writeHead(202).end();
    if (m?.method === 'initialize') stream?.write(`event: message\ndata: ${JSON.stringify(initResult(m.id, '1999-01-01'))}\n\n`);
  });
  const v = await probeUrl(s.url, eras, { timeoutMs: 2000 });
  assert.equal(v.ok, false);
  assert.equal(v.era, undefined);
  assert.equal(v.reason, `initialize settled on "1999-01-01", which Switchyard does not speak ${SPOKEN}`);
  assert.equal(v.steps[v.steps.length - 1].note, 'an InitializeResult at 1999-01-01, a revision Switchyard does not speak');
});

test('dual-era check: a stateless server whose initialize opens a session at 1999-01-01 is modern only', async (t) => {
  const s = await server(t, (req, res, m) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (m?.method === 'initialize') return json(res, 200, initResult(m.id, '1999-01-01'), { 'mcp-session-id': 'odd-2' });
    const result = {
      supportedVersions: ['2026-07-28'],
      capabilities: {},
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'odd', version: '1' } },
    };
    json(res, 200, { jsonrpc: '2.0', id: m?.id, result });
  });
  const v = await probeUrl(s.url, eras, { timeoutMs: 2000, dualEra: true });
  assert.equal(v.ok, true);
  assert.equal(v.era, '2026-07-28');
  assert.equal(v.alsoSessions, undefined);
  assert.equal(v.steps[1].note, 'an InitializeResult at 1999-01-01, a revision Switchyard does not speak: modern only');
  assert.deepEqual(s.seen, ['POST /mcp server/discover', 'POST /mcp initialize', 'DELETE /mcp']);
});

test('an InitializeResult at 2026-07-28 is no era either, and the probe says why rather than that Switchyard does not speak 2026-07-28 (found by a trial)', async (t) => {
  // The reason read "initialize settled on "2026-07-28", which Switchyard does not speak": the
  // gateway speaks 2026-07-28, statelessly; what the server got wrong is naming it in a session.
  const s = await server(t, (req, res, m) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (m?.method === 'initialize') return json(res, 200, initResult(m.id, '2026-07-28'), { 'mcp-session-id': 'odd-3' });
    res.writeHead(404, { 'content-type': 'text/plain' }).end('nope');
  });
  const v = await probeUrl(s.url, eras, { timeoutMs: 2000 });
  assert.equal(v.ok, false);
  assert.equal(v.era, undefined);
  assert.equal(
    v.reason,
    `initialize settled on "2026-07-28", the stateless revision, which has no initialize ${SPOKEN.replace('(it speaks', '(in a session Switchyard speaks')}`,
  );
  assert.equal(v.steps[v.steps.length - 1].note, 'an InitializeResult at 2026-07-28, the stateless revision, which has no initialize');
});
