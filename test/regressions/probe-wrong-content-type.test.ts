// Found by a client-author trial of `switchyard probe` (helper h-probe, 2026-12-05): a server that
// answered initialize with a valid InitializeResult as `text/plain` (or without a Content-Type)
// got `initialize answered HTTP 200 without an InitializeResult`, while the step's excerpt showed
// that very InitializeResult. The answer is refused rightly (a request is answered as
// application/json or text/event-stream), but the reason now says why: the Content-Type.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';

const eras = await eraClients();

for (const [what, type, said] of [
  ['text/plain', 'text/plain', 'text/plain'],
  ['no Content-Type', undefined, 'absent'],
] as const) {
  test(`an InitializeResult sent as ${what}: the reason names the Content-Type`, async (t) => {
    const s = http.createServer((req, res) => {
      let text = '';
      req.on('data', (d: Buffer) => (text += d.toString()));
      req.on('end', () => {
        const m = JSON.parse(text) as { id: unknown };
        const result = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'plain', version: '1' } };
        res.writeHead(200, type ? { 'content-type': type } : {}).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => s.close(() => r())));
    const v = await probeUrl(`http://127.0.0.1:${(s.address() as AddressInfo).port}/mcp`, eras, { timeoutMs: 2000 });
    const why = `(Content-Type ${said}, not application/json or text/event-stream)`;
    assert.equal(v.ok, false);
    assert.equal(v.reason, `initialize answered HTTP 200 without an InitializeResult ${why}`);
    assert.equal(v.steps[0].note, `not a DiscoverResult ${why}: try initialize`);
    assert.equal(v.steps[1].note, `HTTP 200 without an InitializeResult ${why} is not a fallback status (400, 404, 405)`);
  });
}
