// The probe took an HTTP+SSE stream whose `endpoint` event came after other events without a
// word (found by the client-author trial h-redir). 2024-11-05 basic/transports has the server
// send `endpoint` first. The gateway's connector keeps tolerating it (the SDK 1.x SSE client
// does too, and no request is in flight before the endpoint is known; PEERS.md names no server
// that sends anything first), but the probe's verdict now carries a warning naming the break,
// and `switchyard probe` prints it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type http from 'node:http';
import { promisify } from 'node:util';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import type { HttpUpstream } from '../../src/upstreams/http/index.js';
import { CLI } from '../helpers/cli.js';
import { gateway } from '../helpers/gateway.js';
import { stubHttp } from '../helpers/stub-http.js';

const eras = await eraClients();

/**
 * A 2024-11-05 server on 127.0.0.1 port 0 (stubHttp): POSTs to /mcp get 405; GET /mcp opens a
 * stream whose first events are `first`, then `endpoint` (/messages); a POSTed initialize is
 * answered on the stream.
 */
async function server(t: { after(fn: () => Promise<void>): void }, first: string): Promise<string> {
  let stream: http.ServerResponse | undefined;
  const s = await stubHttp(t, (req, res, m) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`${first}event: endpoint\ndata: /messages\n\n`);
      stream = res;
      return;
    }
    if (req.url === '/mcp') return void res.writeHead(405, { allow: 'GET' }).end();
    res.writeHead(202).end();
    if (m?.method === 'initialize') {
      const result = { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'late-endpoint', version: '1' } };
      stream?.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result })}\n\n`);
    }
  });
  return s.url;
}

const LOG = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}\n\n';

test('an endpoint event after a message event: HTTP+SSE all the same, with a warning naming the break', async (t) => {
  const url = await server(t, `: a comment is no event\n\n${LOG}event: ping\ndata: 1\n\n`);
  const v = await probeUrl(url, eras, { timeoutMs: 3000 });
  assert.equal(v.ok, true, v.reason);
  assert.equal(v.transport, 'http+sse');
  assert.equal(v.serverInfo?.name, 'late-endpoint');
  const broke = 'the endpoint event came after 2 other events (message, ping): 2024-11-05 has the server send it first';
  assert.deepEqual(v.warnings, [broke]);
  assert.equal(v.steps[2].note, `an endpoint event: HTTP+SSE, POST to /messages; but ${broke} (tolerated)`);

  const out = await promisify(execFile)(process.execPath, [CLI, 'probe', '--timeout-ms', '3000', url], { encoding: 'utf8' });
  assert.match(out.stdout, new RegExp(`\\nwarning: ${broke.replace(/[()]/g, '\\$&')}\\n$`));

  // The gateway's connector tolerates it: it starts on this server.
  const gw = await gateway(t, { upstreamUrl: url });
  assert.equal((gw.upstreams.get('default') as HttpUpstream).era, '2024-11-05');
});

test('an endpoint event first (comments and data-less events aside): no warning', async (t) => {
  const url = await server(t, ': keep-alive\n\nevent: priming\ndata:\n\n');
  const v = await probeUrl(url, eras, { timeoutMs: 3000 });
  assert.equal(v.ok, true, v.reason);
  assert.equal(v.warnings, undefined);
  assert.equal(v.steps[2].note, 'an endpoint event: HTTP+SSE, POST to /messages');
});

test('many events before the endpoint, with control characters in their types: the stream keeps a few types, the warning counts them all and prints no control character (h-break)', async (t) => {
  // 3000 distinct types, each with an ESC sequence: the list of them grew with every event (in
  // the gateway's connector too, at each session it opened) and went whole, escapes and all, into
  // the probe's warning and the operator's terminal.
  let first = '';
  for (let i = 0; i < 3000; i++) first += `event: t${i}\u001b[2J\ndata: 1\n\n`;
  const url = await server(t, first);
  const v = await probeUrl(url, eras, { timeoutMs: 3000 });
  assert.equal(v.ok, true, v.reason);
  assert.equal(v.warnings?.length, 1);
  const w = v.warnings?.[0] ?? '';
  assert.match(w, /^the endpoint event came after 3000 other events \(t0\?\[2J, t1\?\[2J, .*, …\): 2024-11-05 has the server send it first$/);
  assert.ok(w.length < 400, `${w.length} characters`);
  // eslint-disable-next-line no-control-regex
  assert.doesNotMatch(w, /[\u0000-\u001f]/);
});
