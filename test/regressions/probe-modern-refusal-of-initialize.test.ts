// Found by a client-author trial of `switchyard probe` (helper h-probe, 2026-12-05), probing
// `switchyard emulate --era 2026-07-28 --probe-status 404`: server/discover got the knob's 404,
// then initialize got 400 with -32022 and `data.supported: ["2026-07-28"]`, and the probe took
// that 400 for the fallback status and GET the URL for an HTTP+SSE stream. The 2026-07-28 rule
// falls back on a 400, 404 or 405 only when the body is not a recognised modern error: a -32022
// naming 2026-07-28 says the server is stateless. The probe now stops there, saying so.
// @see 2026-07-28 basic/versioning#backward-compatibility

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { eraClients } from '../../src/gateway.js';
import { testEmulator } from '../helpers/emulate.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { CLI } from '../helpers/cli.js';

const eras = await eraClients();

test('the emulator as a 2026-07-28 server whose server/discover gets 404: initialize -32022 ends the probe, no GET', async (t) => {
  const { emu } = await testEmulator(t, { era: '2026-07-28', probeStatus: 404 });
  const v = await probeUrl(emu.url, eras, { timeoutMs: 2000 });
  assert.equal(v.ok, false);
  assert.equal(v.reason, 'the server names 2026-07-28 in its refusal of initialize, but server/discover got HTTP 404 (no fallback to HTTP+SSE)');
  assert.deepEqual(
    emu.records.map((r) => `${r.method} ${r.path} ${r.status}`),
    ['POST /mcp 404', 'POST /mcp 400'],
  );
  assert.equal(v.steps[1].note, '-32022 naming 2026-07-28 among supported versions: a stateless server, not a reason to fall back');
});

test('switchyard probe against a server that answers discover 405 and initialize 400/-32022: exit 1, no GET sent', async (t) => {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const m = body ? (JSON.parse(body) as { id?: unknown; method?: string }) : undefined;
      seen.push(`${req.method} ${m?.method ?? ''}`.trim());
      if (m?.method === 'initialize') {
        const error = { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'], requested: '2025-11-25' } };
        return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error }));
      }
      res.writeHead(405, { allow: 'POST' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const r = await promisify(execFile)(process.execPath, [CLI, 'probe', '--timeout-ms', '2000', url], { encoding: 'utf8' }).then(
    (x) => ({ code: 0, stdout: x.stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
  assert.equal(r.code, 1, r.stdout);
  assert.match(
    r.stdout,
    /^verdict: no era found: the server names 2026-07-28 in its refusal of initialize, but server\/discover got HTTP 405 \(no fallback to HTTP\+SSE\)$/m,
  );
  assert.deepEqual(seen, ['POST server/discover', 'POST initialize']);
});
