// Each place a large message is parsed asks for the collection that gives its buffers back
// (src/io/large-message.ts; docs/performance.md, "Large messages give their memory back"):
// the front door's POST body, a stdio child's answer line, an HTTP upstream's answer. Counted
// in this process, where the gateways of these tests run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { largeMessageCollections, LARGE_MESSAGE_BYTES } from '../../src/io/large-message.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const LIMITS = { ...DEFAULT_LIMITS, maxBodyBytes: 8 * 1024 * 1024 };
/** A message a little over the threshold once in a JSON body. */
const MESSAGE = 'x'.repeat(LARGE_MESSAGE_BYTES + 1024);
const settle = () => new Promise((r) => setTimeout(r, 50));

async function callEcho(url: string): Promise<void> {
  const r = await post(url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: MESSAGE } }), modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.deepEqual((r.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: `Echo: ${MESSAGE}` }]);
}

test('a large call through a stdio upstream collects after the POST body and after the child answer line', async (t) => {
  const gw = await gateway(t, { limits: LIMITS, stdio: everythingStdioCommand() });
  await settle();
  const before = largeMessageCollections();
  await callEcho(gw.url);
  await settle();
  assert.equal(largeMessageCollections() - before, 2);
});

test('a large call through an HTTP upstream collects after the answer it reads too', async (t) => {
  // The upstream is a second gateway in this process: its POST body is one more large message.
  const upstream = await gateway(t, { limits: LIMITS });
  const gw = await gateway(t, { limits: { ...LIMITS, maxUpstreamMessageBytes: 8 * 1024 * 1024 }, upstreamUrl: upstream.url, upstreamEra: '2026-07-28' });
  await settle();
  const before = largeMessageCollections();
  await callEcho(gw.url);
  await settle();
  // The front POST body, the upstream gateway's POST body, the answer the front read.
  assert.equal(largeMessageCollections() - before, 3);
});

test('a gzip body that decodes to a large message collects after it is parsed', async (t) => {
  const gw = await gateway(t, { limits: LIMITS });
  await settle();
  const before = largeMessageCollections();
  const body = gzipSync(JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: MESSAGE } })));
  const r = await request(gw.url, { method: 'POST', headers: { ...modernHeaders('tools/call', 'echo'), 'content-encoding': 'gzip' }, body });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(((await r.body.json()) as { result: { content: unknown } }).result.content, [{ type: 'text', text: `Echo: ${MESSAGE}` }]);
  await settle();
  // The demo answers in this process: the decoded body is the one large message parsed.
  assert.equal(largeMessageCollections() - before, 1);
});

test('small calls collect nothing', async (t) => {
  const gw = await gateway(t, { limits: LIMITS, stdio: everythingStdioCommand() });
  await settle();
  const before = largeMessageCollections();
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 200);
  await settle();
  assert.equal(largeMessageCollections() - before, 0);
});
