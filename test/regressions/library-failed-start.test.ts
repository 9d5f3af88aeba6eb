// A user trial of the library: docs/embedding.md said that a failed upstream start rejects
// `ready()` and makes every later request 502, for good. That is `requireUpstreams: true` only;
// by default `ready()` resolves, the upstream is down (503 SWY_ERR_UPSTREAM_DOWN with
// Retry-After) and reconnects in the background. Both are pinned here, through fetch and the
// Node handler.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { modernRequest, switchyard } from '../helpers/library.js';

/** A stdio upstream whose child exits at once, every time. */
const dead = (requireUpstreams: boolean) => ({
  requireUpstreams,
  upstreams: { s: { command: process.execPath, args: ['-e', 'process.exit(3)'] } },
});

async function nodeServer(t: { after(fn: () => Promise<void>): void }, handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>) {
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/s/mcp`;
}

test('by default a failed upstream start is not final: ready() resolves and its mount answers 503 SWY_ERR_UPSTREAM_DOWN with Retry-After while it reconnects', async (t) => {
  const sy = switchyard(t, dead(false));
  await sy.ready();
  const url = await nodeServer(t, sy.handle);
  const check = (status: number, retryAfter: string | null, body: { id: unknown; error: { code: number; message: string; data: Record<string, unknown> } }) => {
    assert.equal(status, 503);
    assert.match(retryAfter ?? '', /^[1-9][0-9]*$/);
    assert.deepEqual(
      { ...body, error: { ...body.error, data: { ...body.error.data, retryAfterMs: 0 } } },
      {
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32000, message: 'Upstream down: s is reconnecting', data: { upstream: 's', retryAfterMs: 0 } },
      },
    );
    assert.equal(typeof body.error.data.retryAfterMs, 'number');
  };
  for (let i = 0; i < 2; i++) {
    const f = await sy.fetch(modernRequest('tools/list', {}, { url: 'http://127.0.0.1/s/mcp', id: 7 }));
    check(f.status, f.headers.get('retry-after'), (await f.json()) as never);
    const r = await request(url, { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(7, 'tools/list')) });
    check(r.statusCode, r.headers['retry-after'] as string, (await r.body.json()) as never);
  }
});

test('with requireUpstreams a failed start is final: ready() rejects with SWY_ERR_UPSTREAM_UNAVAILABLE naming the upstream, and every request gets 502 with it', async (t) => {
  const sy = switchyard(t, dead(true));
  const message = 'Upstream unavailable: child exited during start (3) (upstream s)';
  await assert.rejects(sy.ready(), { code: 'SWY_ERR_UPSTREAM_UNAVAILABLE', message });
  await assert.rejects(sy.ready(), { code: 'SWY_ERR_UPSTREAM_UNAVAILABLE', message });
  const url = await nodeServer(t, sy.handle);
  // Refused once the body was read, so with the request's id (JSON-RPC 2.0 §5), as the standalone listener answers.
  const want = { jsonrpc: '2.0', id: 7, error: { code: -32000, message } };
  for (let i = 0; i < 2; i++) {
    const f = await sy.fetch(modernRequest('tools/list', {}, { url: 'http://127.0.0.1/s/mcp', id: 7 }));
    assert.deepEqual([f.status, await f.json()], [502, want]);
    const r = await request(url, { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(7, 'tools/list')) });
    assert.deepEqual([r.statusCode, await r.body.json()], [502, want]);
  }
});
