// A client that resets its connection (a killed process, a closed tab) refused nothing: Node
// reports the reset as a client error, and the listener answered it like a malformed request,
// counting a 400 SWY_ERR_HTTP_FRAMING (switchyard_refusals_total) and logging `request refused`
// for every connection a killed client left. Found by an operator's trial: five calls in flight
// when the client script was killed, five framing refusals counted.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { channels } from '../../src/core/diagnostics.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders } from '../helpers/http.js';

/** The HTTP/1.1 head of a 2026-07-28 tools/call of `name` with `args`, and its body. */
function callText(port: number, name: string, args: Record<string, unknown>): { head: string; body: string } {
  const body = JSON.stringify(modernBody(1, 'tools/call', { name, arguments: args }));
  const fields = Object.entries({ ...modernHeaders('tools/call', name), host: `127.0.0.1:${port}`, 'content-length': String(Buffer.byteLength(body)) })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return { head: `POST /mcp HTTP/1.1\r\n${fields}\r\n`, body };
}

/** Connects, writes `text`, waits `ms`, then resets the connection (TCP RST); resolves once it is closed. */
function writeThenReset(port: number, text: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(text);
      setTimeout(() => s.resetAndDestroy(), ms);
    });
    s.on('error', reject);
    s.on('close', () => resolve());
  });
}

test('a connection the client resets, mid-call or mid-body, is no refusal', async (t) => {
  const gw = await gateway(t);
  const port = gw.http.address().port;
  const seen: Array<{ code: string; status: number }> = [];
  const on = (m: unknown) => seen.push({ code: (m as { code: string }).code, status: (m as { status: number }).status });
  channels.refusal.subscribe(on);
  t.after(() => channels.refusal.unsubscribe(on));
  const slow = callText(port, 'slow', { steps: 1, stepMs: 1_000 });
  // A whole request whose answer the client no longer waits for; a body cut in half.
  await writeThenReset(port, slow.head + slow.body, 200);
  await writeThenReset(port, slow.head + slow.body.slice(0, 10), 200);
  // A refusal would be published while the reset is handled: a valid request on a fresh connection
  // after both is answered, so both resets have been seen by then.
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: modernHeaders('tools/call', 'echo'),
    body: JSON.stringify(modernBody(2, 'tools/call', { name: 'echo', arguments: { message: 'after' } })),
  });
  assert.equal(res.status, 200);
  assert.match(await res.text(), /Echo: after/);
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(seen, []);
});
