// A new-user trial of `switchyard emulate`: a POST the gateway refused for its Host was recorded
// as `POST /mcp → 403`, with no JSON-RPC method where every other POST shows one. The Host check
// (like the Origin check, a transfer coding it cannot undo, and a body over maxBodyBytes) refuses
// the request at its head, deliberately before the body is read (docs/edge.md), so the method is
// not known: the record now says why (`bodyUnread`), and the report shows
// `POST /mcp (body not read: Host refused) → 403`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { request } from 'undici';
import { testEmulator } from '../helpers/emulate.js';

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'trial', version: '1' } },
});
const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'user-agent': 'trial' };

/** POSTs `body` to `url` with `headers` over `H`; returns the status. */
async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const r = await request(url, { method: 'POST', headers: { ...H, ...headers }, body });
  await r.body.dump();
  return r.statusCode;
}

/** A POST with `Transfer-Encoding: gzip, chunked` on a raw socket (undici refuses to send one); returns the status line. */
async function postGzipCoded(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUser-Agent: trial\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
  );
  let text = '';
  for await (const chunk of socket) {
    text += (chunk as Buffer).toString('latin1');
    if (text.includes('\r\n')) break;
  }
  socket.destroy();
  return text.slice(0, text.indexOf('\r\n'));
}

test('a POST refused before its body was read says why in its record and the report; one refused after shows its method', async (t) => {
  const { emu } = await testEmulator(t, { era: '2025-03-26', limits: { maxBodyBytes: 1024 } });
  const url = emu.url;
  const { port } = new URL(url);
  assert.equal(await post(url, INIT, { host: `evil.example:${port}` }), 403);
  assert.equal(await post(url, INIT, { origin: 'http://evil.example' }), 403);
  assert.equal(await postGzipCoded(url), 'HTTP/1.1 501 Not Implemented');
  assert.equal(await post(url, INIT + ' '.repeat(2048)), 413);
  // Refused after the body was read (Content-Type, 415): the method is known.
  assert.equal(await post(url, INIT, { 'content-type': 'text/plain' }), 415);
  assert.equal(await post(url, INIT), 200);

  assert.deepEqual(
    emu.records.map((r) => [r.status, r.rpc?.method, r.bodyUnread]),
    [
      [403, undefined, 'Host refused'],
      [403, undefined, 'Origin refused'],
      [501, undefined, 'transfer coding refused'],
      [413, undefined, 'over maxBodyBytes'],
      [415, 'initialize', undefined],
      [200, 'initialize', undefined],
    ],
  );
  assert.equal(
    emu.report(),
    `switchyard emulate --era 2025-03-26 (${url})\n` +
      'POST /mcp (body not read: Host refused) → 403; POST /mcp (body not read: Origin refused) → 403; ' +
      'POST /mcp (body not read: transfer coding refused) → 501; POST /mcp (body not read: over maxBodyBytes) → 413; ' +
      'POST /mcp (initialize) → 415; POST /mcp (initialize) → 200\n' +
      'verdict: retried after 403 and used Streamable HTTP (negotiated 2025-03-26)\n',
  );
});

test('a client that gives up after Host refusals: the verdict lists each with why its body was not read', async (t) => {
  const { emu } = await testEmulator(t, { era: '2025-03-26' });
  const { port } = new URL(emu.url);
  for (let i = 0; i < 2; i++) assert.equal(await post(emu.url, INIT, { host: `evil.example:${port}` }), 403);
  assert.equal(
    emu.report(),
    `switchyard emulate --era 2025-03-26 (${emu.url})\n` +
      'POST /mcp (body not read: Host refused) → 403 ×2\n' +
      'verdict: did not fall back (gave up after POST /mcp → 403 (body not read: Host refused), 403 (body not read: Host refused))\n',
  );
});
