// Regression (found by an attacker trial, helper h-t3, 2026-12-05): the examples new users copy
// set no connection bounds. Node's defaults are a 60 s head timeout checked every 30 s, and
// fastify's requestTimeout is 0 (none), so a client sending its head slowly held a connection
// for a minute or more on every example, and a slow body under a valid token for as long as it
// liked on the node:http and fastify ones. docs/embedding.md says those bounds are the host's; the
// examples now set the standalone listener's defaults (head 10 s, whole request 20 s), checked
// every second.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startExample } from '../helpers/examples.js';

/** Sends half a request head to `url`'s host and resolves with the ms until the server ends the connection. */
function slowHead(url: string): Promise<{ ms: number; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let answer = '';
    const socket = net.connect(Number(port), hostname, () =>
      socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n`),
    );
    socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
    socket.on('close', () => resolve({ ms: Date.now() - started, answer }));
    socket.on('error', reject);
    // Past the bound asserted below: the test's own stop.
    setTimeout(() => socket.destroy(), 20_000).unref();
  });
}

test('every example cuts off a client that sends its head slowly within the 10 s head bound', { timeout: 60_000 }, async (t) => {
  const examples = await Promise.all(['node-http.mjs', 'hono.mjs', 'fastify.mjs'].map((file) => startExample(t, file)));
  const cut = await Promise.all(examples.map((ex) => slowHead(ex.url)));
  for (const [i, c] of cut.entries()) {
    assert.ok(c.ms >= 9_000 && c.ms < 13_000, `example ${i}: closed after ${c.ms} ms`);
    // Node answers an expired head 408 when nothing was sent yet (or closes without a word).
    assert.ok(c.answer === '' || c.answer.startsWith('HTTP/1.1 408'), c.answer);
  }
});
