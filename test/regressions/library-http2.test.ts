// Found by a trial as an embedding developer: registered in a fastify application created with
// `http2: true`, the plugin answered every MCP request 400 `Bad Request: invalid or repeated Host:
// Host missing`. An HTTP/2 request names its authority in the `:authority` pseudo-header, and a
// client sends no `Host` (RFC 9113 §8.3.1); the Host check (on loopback, where the listener's
// names are the allowlist) and the public URL read `Host` only. With a `Host` sent, its SSE answers
// carried `Connection: keep-alive`, a connection-specific field HTTP/2 forbids (RFC 9113 §8.2.2),
// which Node drops with an `UnsupportedWarning` on the host's stderr. Now `:authority` is the
// authority of an HTTP/2 request, and an HTTP/2 answer carries no `Connection`. A body over
// `maxBodyBytes` was answered 413 with `Connection: close` (the same warning), and the refusal's
// lingering close was set on the session's socket, which every stream of the connection shares:
// now an HTTP/2 request is refused alone, and the session serves the next one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

interface H2Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
}

/** One request on `session`, read to its end. */
function h2request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: string): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers);
    let got: http2.IncomingHttpHeaders = {};
    let text = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => (got = h));
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('end', () => resolve({ status: Number(got[':status']), headers: got, body: text }));
    stream.on('error', reject);
    stream.end(body);
  });
}

/** A fastify HTTP/2 (cleartext) application with the plugin, and an HTTP/2 session to it. */
async function h2app(t: { after(fn: () => Promise<void> | void): void }, config: Parameters<typeof switchyard>[1] = {}) {
  const sy = switchyard(t, config);
  const app = Fastify({ http2: true });
  await app.register(sy.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const session = http2.connect(`http://127.0.0.1:${port}`);
  t.after(async () => {
    session.close();
    await app.close();
  });
  return { session, port };
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'h2', version: '1' } },
});

test('the plugin in an HTTP/2 fastify app serves requests whose authority is in :authority, without a Host field', async (t) => {
  const { session } = await h2app(t);
  const init = await h2request(
    session,
    { ':method': 'POST', ':path': '/mcp', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    initialize,
  );
  assert.equal(init.status, 200, init.body);
  assert.equal((JSON.parse(init.body) as { result: { serverInfo: { name: string } } }).result.serverInfo.name, 'switchyard-demo');

  const list = await h2request(session, { ':method': 'POST', ':path': '/mcp', ...modernHeaders('tools/list') }, JSON.stringify(modernBody(2, 'tools/list')));
  assert.equal(list.status, 200, list.body);
  assert.ok((JSON.parse(list.body) as { result: { tools: unknown[] } }).result.tools.length > 0);
});

test('over HTTP/2 an SSE answer carries no Connection field, and Node warns of none', async (t) => {
  const { session } = await h2app(t);
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  t.after(() => void process.off('warning', onWarning));
  const call = await h2request(
    session,
    { ':method': 'POST', ':path': '/mcp', ...modernHeaders('tools/call', 'slow'), accept: 'text/event-stream, application/json' },
    JSON.stringify(modernBody(3, 'tools/call', { name: 'slow', arguments: { steps: 2, stepMs: 10 }, _meta: { progressToken: 'p' } })),
  );
  assert.equal(call.status, 200, call.body);
  assert.equal(call.headers['content-type'], 'text/event-stream');
  assert.match(call.body, /notifications\/progress/);
  assert.match(call.body, /Finished 2 steps/);
  assert.equal(call.headers.connection, undefined);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    warnings.filter((w) => /connection header/i.test(w)),
    [],
  );
});

test('over HTTP/2 the Host check reads :authority: a foreign one is refused, the listener’s own served', async (t) => {
  const { session, port } = await h2app(t, { allowedHosts: ['127.0.0.1'] });
  const body = JSON.stringify(modernBody(4, 'tools/list'));
  const own = await h2request(session, { ':method': 'POST', ':path': '/mcp', ':authority': `127.0.0.1:${port}`, ...modernHeaders('tools/list') }, body);
  assert.equal(own.status, 200, own.body);
  const foreign = await h2request(
    session,
    { ':method': 'POST', ':path': '/mcp', ':authority': `rebind.example:${port}`, ...modernHeaders('tools/list') },
    body,
  );
  assert.equal(foreign.status, 403, foreign.body);
  assert.match(foreign.body, /Forbidden: Host not allowed/);
});

test('over HTTP/2 a body over maxBodyBytes is refused 413 alone: no Connection field, no warning, the session serves on', async (t) => {
  const { session } = await h2app(t, { limits: { maxBodyBytes: 1024 } });
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  t.after(() => void process.off('warning', onWarning));
  let closed = false;
  session.on('close', () => (closed = true));
  const big = await h2request(session, { ':method': 'POST', ':path': '/mcp', ...modernHeaders('tools/list') }, 'x'.repeat(64 * 1024));
  assert.equal(big.status, 413, big.body);
  assert.match(big.body, /Request body exceeds the limit/);
  assert.equal(big.headers.connection, undefined);
  const next = await h2request(session, { ':method': 'POST', ':path': '/mcp', ...modernHeaders('tools/list') }, JSON.stringify(modernBody(5, 'tools/list')));
  assert.equal(next.status, 200, next.body);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(closed, false);
  assert.deepEqual(
    warnings.filter((w) => /connection header/i.test(w)),
    [],
  );
});
