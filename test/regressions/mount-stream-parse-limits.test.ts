// Regression (found by a trial, h-trial6): an upstream's own `limits` may set any limit but the
// listener-wide ones (docs/config.md, Upstream keys), yet the HTTP listener (and the fetch
// handler) read the parse bounds (`maxJsonDepth`, `maxIntegerDigits`, `maxIdBytes`),
// `keepaliveMs` and `maxStreamBufferBytes` from the top-level limits only: a mount with
// `maxJsonDepth: 8` parsed 12 levels, one with `keepaliveMs: 200` sent its first keepalive after
// 15 s, and an HTTP+SSE client that stopped reading a mount with `maxStreamBufferBytes: 200000`
// was cut at 8 MiB. Each is now its mount's, with the top-level value where the upstream sets none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli } from '../helpers/cli.js';
import { H2025, modernBody, modernHeaders, openSse, post } from '../helpers/http.js';
import { modernRequest, switchyard } from '../helpers/library.js';

const CONFIG = [
  'dialects: { legacySse: true }',
  'upstreams:',
  '  tight:',
  '    transport: embedded',
  '    limits: { maxJsonDepth: 8, keepaliveMs: 200, maxStreamBufferBytes: 200000 }',
  '  loose:',
  '    transport: embedded',
].join('\n');

async function start(t: { after(fn: () => void | Promise<void>): void }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-mount-limits-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'limits.yaml');
  writeFileSync(file, CONFIG);
  return startCli(t, ['--config', file, '--no-admin']);
}

/** A tools/call of echo whose arguments nest `depth` arrays. */
function deepCall(depth: number): Record<string, unknown> {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi', deep: v } });
}

test("an upstream's own maxJsonDepth bounds what its mount parses; the other mount keeps the top-level bound", async (t) => {
  const gw = await start(t);
  const tight = await post(`${gw.origin}/tight/mcp`, deepCall(10), modernHeaders('tools/call', 'echo'));
  assert.equal(tight.status, 400);
  assert.deepEqual(tight.json, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: nesting deeper than the limit: limit 8' } });
  const loose = await post(`${gw.origin}/loose/mcp`, deepCall(10), modernHeaders('tools/call', 'echo'));
  assert.equal(loose.status, 200);
  assert.equal((loose.json as { result: { content: Array<{ text: string }> } }).result.content[0].text, 'Echo: hi');
});

test("an upstream's own keepaliveMs paces its mount's SSE streams", async (t) => {
  const gw = await start(t);
  const init = await post(
    `${gw.origin}/tight/mcp`,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'k', version: '1' } } },
    H2025,
  );
  const sid = init.headers['mcp-session-id'] as string;
  const sse = await openSse(`${gw.origin}/tight/mcp`, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  await new Promise((r) => setTimeout(r, 1000));
  // About five at 200 ms; none at the top-level 15 s.
  const keepalives = sse.raw().split(': keepalive\n\n').length - 1;
  assert.ok(keepalives >= 2, `keepalive comments in 1 s: ${keepalives}; raw: ${JSON.stringify(sse.raw())}`);
});

test("an upstream's own maxStreamBufferBytes cuts a client that stopped reading its mount's HTTP+SSE stream", async (t) => {
  const gw = await start(t);
  const socket = net.connect(gw.port, '127.0.0.1');
  t.after(() => socket.destroy());
  socket.write(`GET /tight/sse HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nAccept: text/event-stream\r\n\r\n`);
  const endpoint = await new Promise<string>((resolve) => {
    let got = '';
    const on = (d: Buffer) => {
      got += d.toString();
      const m = /data: (\S+)/.exec(got);
      if (m) {
        socket.off('data', on);
        resolve(m[1]);
      }
    };
    socket.on('data', on);
  });
  socket.pause(); // reads nothing more
  const to = new URL(endpoint, `${gw.origin}/tight/sse`).href;
  const h = { 'content-type': 'application/json' };
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 's', version: '1' } },
  };
  assert.equal((await post(to, init, h)).status, 202);
  // 8 MB of answers in all: below the top-level 8 MiB with what the kernel holds, far above 200,000.
  const message = 'x'.repeat(200_000);
  for (let i = 1; i <= 40; i++) {
    const r = await post(to, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { message } } }, h);
    if (r.status === 404) break; // the session ended with its cut stream
    assert.equal(r.status, 202);
  }
  const deadline = Date.now() + 5000;
  let cut: Record<string, unknown> | undefined;
  while (!(cut = gw.records().find((r) => r.msg === 'slow client cut')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(cut, `no slow client cut; log: ${gw.stderr().slice(-2000)}`);
  assert.equal(cut.maxBufferBytes, 200_000);
  const closed = gw.records().find((r) => r.msg === 'session closed' && r.dialect === '2024-11-05');
  assert.equal(closed?.reason, 'slow-reader');
});

test("the fetch handler (createSwitchyard) parses with the mount's own maxJsonDepth too", async (t) => {
  const sy = switchyard(t, { upstreams: { tight: { transport: 'embedded', limits: { maxJsonDepth: 8 } }, loose: { transport: 'embedded' } } });
  let deep: unknown = 1;
  for (let i = 0; i < 10; i++) deep = [deep];
  const bare = { name: 'echo', arguments: { message: 'hi', deep } };
  const tight = await sy.fetch(modernRequest('tools/call', bare, { name: 'echo', url: 'http://127.0.0.1/tight/mcp' }));
  assert.equal(tight.status, 400);
  assert.deepEqual(await tight.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: nesting deeper than the limit: limit 8' } });
  const loose = await sy.fetch(modernRequest('tools/call', bare, { name: 'echo', url: 'http://127.0.0.1/loose/mcp' }));
  assert.equal(loose.status, 200);
});
