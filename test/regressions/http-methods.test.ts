// Methods no route takes on an endpoint. Found by a new-user trial (helper-9): TRACE, PROPFIND,
// SEARCH, LOCK and QUERY on the MCP path answered 404 Not found, where docs/dialects.md and the
// error catalogue promise 405 with `Allow` for every other method (RFC 9110 §15.5.6).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { Dispatcher } from 'undici';
import { gateway } from '../helpers/gateway.js';
import { send } from '../helpers/http.js';
import { rawRequest } from '../helpers/raw-http.js';

test('TRACE, PROPFIND, SEARCH, LOCK and QUERY on the MCP and HTTP+SSE paths: 405 with the endpoint’s Allow; on an unknown path: 404', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const base = gw.url.replace(/\/mcp$/, '');
  const methods = ['TRACE', 'PROPFIND', 'SEARCH', 'LOCK', 'QUERY'] as Dispatcher.HttpMethod[];
  for (const [path, allow] of [
    ['/mcp', 'GET, POST, DELETE'],
    ['/sse', 'GET'],
    ['/messages', 'POST'],
  ]) {
    for (const method of methods) {
      // QUERY carries a body (draft-ietf-httpbis-safe-method-w-body); the others are sent without.
      const r =
        method === 'QUERY'
          ? await send(`${base}${path}`, method, '{}', { 'content-type': 'application/json' })
          : await send(`${base}${path}`, method, undefined, {});
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.equal(r.headers.allow, allow, `${method} ${path}`);
      assert.deepEqual(r.json, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed' } });
    }
  }
  const other = await send(`${base}/elsewhere`, 'TRACE', undefined, {});
  assert.equal(other.status, 404);
  assert.equal(other.headers.allow, undefined);
});

// Found by a trial (helper-9): a QUERY without a body (so without Content-Type) got 400 "Parse
// error: invalid JSON": fastify refuses it before any route (RFC 10008 §2), and that refusal was
// read as a body that did not parse.
test('a QUERY without a body or Content-Type: 405 with Allow on the MCP path, 404 elsewhere, 403 from a foreign Origin', async (t) => {
  const gw = await gateway(t);
  const base = gw.url.replace(/\/mcp$/, '');
  const onMcp = await send(`${base}/mcp`, 'QUERY', undefined, {});
  assert.equal(onMcp.status, 405);
  assert.equal(onMcp.headers.allow, 'GET, POST, DELETE');
  assert.deepEqual(onMcp.json, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed' } });
  const elsewhere = await send(`${base}/elsewhere`, 'QUERY', undefined, {});
  assert.equal(elsewhere.status, 404);
  const foreign = await send(`${base}/mcp`, 'QUERY', undefined, { origin: 'http://evil.example' });
  assert.equal(foreign.status, 403);
});

// Found by a trial: `Expect: bogus` got node:http's 417 with an empty chunked body, where every
// other refusal before routing carries a JSON-RPC error (RFC 9110 §10.1.1: 100-continue is the
// only expectation defined).
test('an Expect other than 100-continue: 417 with a JSON-RPC error body; Expect: 100-continue is still served', async (t) => {
  const gw = await gateway(t);
  const port = Number(new URL(gw.url).port);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'expect', version: '1' } },
  });
  const head = (expect: string) =>
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nExpect: ${expect}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream`;
  const bogus = await rawRequest(port, head('bogus'), body);
  assert.equal(bogus.status, 417);
  assert.equal(bogus.headers['content-type'], 'application/json');
  assert.deepEqual(bogus.json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Expectation failed' } });
  const cont = await rawRequest(port, head('100-continue'), body);
  // 100 Continue first (node:http sends it), then the answer.
  assert.equal(cont.status, 100);
  assert.match(cont.body, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(cont.body, /"protocolVersion":"2025-06-18"/);
});

// Found by a trial: a CONNECT got the connection closed with no answer at all (node:http destroys
// the socket of a CONNECT when the server has no 'connect' listener), where every other refused
// request carries a status and a JSON-RPC error. RFC 9110 §9.3.6: CONNECT asks for a tunnel,
// which only a proxy gives; 405 names the methods the listener does serve (§15.5.6).
test('CONNECT: 405 with the listener’s Allow and a JSON-RPC error body, then the connection closes; the listener goes on serving', async (t) => {
  const body = { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed: CONNECT (this server is not a proxy)' } };
  for (const [dialects, allow] of [
    [['2026-07-28', '2025-03-26', '2024-11-05'], 'GET, POST, DELETE'],
    [['2026-07-28'], 'POST'],
  ] as const) {
    const gw = await gateway(t, { dialects: [...dialects] });
    const port = Number(new URL(gw.url).port);
    for (const target of ['example.com:443', `127.0.0.1:${port}`]) {
      // rawRequest reads until the server closes (status 0: it closed without a word).
      const r = await rawRequest(port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}`);
      assert.equal(r.status, 405, `${dialects.join()} ${target}: ${r.body}`);
      assert.equal(r.headers.allow, allow);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.headers.connection, 'close');
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body));
      assert.deepEqual(r.json, body);
    }
    // A client that keeps its side open and sends more still gets the whole answer, then the close.
    const raw = await new Promise<string>((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port });
      let got = '';
      s.on('data', (d: Buffer) => (got += d.toString('utf8')));
      s.on('error', reject);
      s.on('close', () => resolve(got));
      s.write(`CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n\x16\x03\x01\x00\x05hello`);
    });
    assert.match(raw, /^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    assert.ok(raw.endsWith(JSON.stringify(body)), raw);
    const after = await send(gw.url.replace(/\/mcp$/, '/nope'), 'GET', undefined, {});
    assert.equal(after.status, 404);
    assert.deepEqual(after.json, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Not found' } });
  }
});
