// Named in the closing notes of the last round: an upstream configured `type: sse` (HTTP+SSE,
// era 2024-11-05) whose URL serves Streamable HTTP was marked down with "no HTTP+SSE stream
// either (HTTP 405, …)", though such an upstream tries nothing but the GET: the "either" belongs
// to `switchyard probe`, which tried two POSTs first. The connector now says what it tried (the
// GET and its answer) and, to the operator, which config type tries Streamable HTTP; a client
// whose own upstream session meets that answer reads the finding without the URL or the advice.
// Named in the closing notes of the round after: the advice said `type: sse` whatever the operator
// had written; an era pinned by `era: 2024-11-05` (or `--upstream-era 2024-11-05`, or a
// `transport: sse`) is now advised in those words.
// Named in the closing notes of the round after that: the advice came after the finding, so with
// a 5-digit port and the longest wording the reason was 201 characters, and /readyz (which cuts a
// reason at 200) clipped its end; it now comes first. And the library's `startGateway({
// upstreamEra: '2024-11-05' })` was advised `era: …`, a key it never wrote: it now reads `upstreamEra`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { gatewayFromConfig } from '../helpers/identity.js';
import { configGateway, getText } from '../helpers/ops.js';
import { H2025, post } from '../helpers/http.js';
import { stubHttp } from '../helpers/stub-http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { recordingLogger } from '../helpers/gateway.js';
import { startGateway } from '../../src/gateway.js';
import { listenForTest } from '../helpers/stub-http.js';
import { createServer } from 'node:http';

const tried = 'the GET answered HTTP 405, application/json: no HTTP+SSE stream';
const advice = 'type: sse tries only a GET (for Streamable HTTP use type: http)';

test('type: sse at a Streamable HTTP URL: lastError and /readyz name the GET tried and its answer, and suggest type: http', async (t) => {
  const modern = await gatewayFromConfig(t, { admin: false, upstreams: { demo: { transport: 'embedded' } } });
  const url = modern.urls[0];
  const gw = await configGateway(
    t,
    {
      admin: { port: 0 },
      // One attempt while the test looks: the next is a minute away.
      limits: { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 },
      upstreams: { old: { type: 'sse', url } },
    },
    { operations: true },
  );
  const reason = `Upstream unavailable: ${new URL(url).origin}: ${advice}; ${tried}`;
  assert.equal(gw.supervised.get('old')?.state, 'down');
  assert.equal(gw.supervised.get('old')?.lastError, reason);
  assert.deepEqual(await getText(`${gw.admin!.address().url}readyz`).then((r) => [r.status, r.json]), [
    503,
    { ready: false, reasons: [`upstream old is down: ${reason}`] },
  ]);
});

test("a client whose upstream session's GET meets a Streamable HTTP answer gets what was tried, with neither the URL nor the advice", async (t) => {
  // An HTTP+SSE server for the gateway's control stream, then Streamable HTTP's 405 to every other GET.
  let stream: http.ServerResponse | undefined;
  const s = await stubHttp(t, (req, res, m) => {
    if (req.method === 'GET') {
      if (stream) return void res.writeHead(405, { 'content-type': 'application/json', allow: 'POST' }).end('{}');
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages?sessionId=s\n\n');
      return;
    }
    res.writeHead(202).end();
    if (m?.method === 'initialize') {
      const result = { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'stub', version: '1' } };
      stream!.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result })}\n\n`);
    }
  });
  t.after(() => void stream?.end());
  const gw = await gatewayFromConfig(t, { admin: false, upstreams: { old: { type: 'sse', url: s.url } } });
  assert.equal(gw.supervised.get('old')?.state, 'up');
  const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } };
  const r = await post(gw.urls[0], { jsonrpc: '2.0', id: 1, method: 'initialize', params: init }, H2025);
  assert.equal(r.status, 200);
  const session = { ...H2025, 'mcp-session-id': String(r.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
  const list = await post(gw.urls[0], { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
  assert.deepEqual([list.status, list.json], [200, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: `Upstream unavailable: ${tried}` } }]);
  // The control stream's GET, its initialize, and the client session's own GET: nothing else was tried.
  assert.deepEqual(s.seen, ['GET /mcp', 'POST /messages?sessionId=s initialize', 'POST /messages?sessionId=s notifications/initialized', 'GET /mcp']);
});

/** The lastError of upstream `old`, configured with `entry` at the URL of a Streamable HTTP gateway. */
async function lastErrorOf(t: Parameters<typeof configGateway>[0], entry: Record<string, unknown>): Promise<[string, string | undefined]> {
  const modern = await gatewayFromConfig(t, { admin: false, upstreams: { demo: { transport: 'embedded' } } });
  const url = modern.urls[0];
  const gw = await configGateway(t, {
    admin: false,
    limits: { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 },
    upstreams: { old: { ...entry, url } },
  });
  return [new URL(url).origin, gw.supervised.get('old')?.lastError];
}

test('era: 2024-11-05 at a Streamable HTTP URL: the advice names era, not type', async (t) => {
  const [origin, lastError] = await lastErrorOf(t, { era: '2024-11-05' });
  assert.equal(lastError, `Upstream unavailable: ${origin}: era: 2024-11-05 tries only a GET (for Streamable HTTP use era: auto); ${tried}`);
});

test('transport: sse at a Streamable HTTP URL: the advice names transport', async (t) => {
  const [origin, lastError] = await lastErrorOf(t, { transport: 'sse' });
  assert.equal(lastError, `Upstream unavailable: ${origin}: transport: sse tries only a GET (for Streamable HTTP use transport: http); ${tried}`);
});

test('--upstream-era 2024-11-05 on the command line at a Streamable HTTP URL: the advice names the flag', async (t) => {
  const modern = await gatewayFromConfig(t, { admin: false, upstreams: { demo: { transport: 'embedded' } } });
  const url = modern.urls[0];
  const gw = await startOpsCli(t, ['--host', '127.0.0.1', '--port', '0', '--no-admin', '--upstream', url, '--upstream-era', '2024-11-05']);
  const down = await gw.waitFor((r) => r.msg === 'upstream down');
  assert.equal(
    down.err,
    `Upstream unavailable: ${new URL(url).origin}: --upstream-era 2024-11-05 tries only a GET (for Streamable HTTP use --upstream-era auto); ${tried}`,
  );
});

/**
 * A Streamable HTTP server's answer to a GET (405, `Allow: POST`, a JSON body with a charset) on
 * 127.0.0.1:65535, the longest loopback origin (127.0.0.2:65535, as long, when that port is
 * taken); resolves with its URL, with a path.
 */
async function streamableAtPort65535(t: Parameters<typeof listenForTest>[0]): Promise<string> {
  const server = createServer((_req, res) => void res.writeHead(405, { 'content-type': 'application/json; charset=utf-8', allow: 'POST' }).end('{}'));
  for (const host of ['127.0.0.1', '127.0.0.2']) {
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(65535, host, () => resolve(true));
    });
    if (!bound) continue;
    t.after(() => new Promise<void>((r) => server.close(() => r())));
    return `http://${host}:65535/api/v1/mcp`;
  }
  throw new Error('port 65535 is taken on 127.0.0.1 and 127.0.0.2');
}

test("library startGateway({ upstreamEra: '2024-11-05' }) at a Streamable HTTP URL on port 65535: /readyz carries the whole advice, in upstreamEra's words", async (t) => {
  const url = await streamableAtPort65535(t);
  const gw = await startGateway(
    {
      host: '127.0.0.1',
      port: 0,
      adminPort: 0,
      upstreamUrl: url,
      upstreamEra: '2024-11-05',
      limits: { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 },
    },
    recordingLogger([]),
    { operations: true },
  );
  t.after(() => gw.close());
  const advice = "upstreamEra: '2024-11-05' tries only a GET (for Streamable HTTP use upstreamEra: 'auto')";
  const reason = `Upstream unavailable: ${new URL(url).origin}: ${advice}; the GET answered HTTP 405, application/json; charset=utf-8: no HTTP+SSE stream`;
  assert.equal(gw.supervised.get('default')?.lastError, reason);
  // /readyz keeps the first 200 characters of a reason: the advice is all inside them.
  assert.deepEqual(await getText(`${gw.admin!.address().url}readyz`).then((r) => [r.status, r.json]), [
    503,
    { ready: false, reasons: [`upstream default is down: ${reason.slice(0, 200)}`] },
  ]);
});
