// Found by a client-author trial of `switchyard probe` (helper h-probe, 2026-12-05): two answers
// whose body never ends held the probe for ever, whatever --timeout-ms said.
// - The fallback GET answered with something that is no event stream (a 200 `text/plain`, a 404
//   HTML page) whose body the server kept open: its excerpt was read without a time bound. The
//   gateway's start probe of such an `--upstream` hung the same way, `--require-upstreams` or not.
// - The DELETE that ends the session the probe opened (Streamable HTTP): its headers were bounded,
//   its body (drained) was not; the gateway's start probe of such an upstream hung too.
// Each is now read within the step's time.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { CLI } from '../helpers/cli.js';
import { stubHttp, type StubMessage } from '../helpers/stub-http.js';

/** A server on 127.0.0.1 port 0 (stubHttp) that runs `handle` for each request (its POST body read first). */
const server = (
  t: { after(fn: () => Promise<void>): void },
  handle: (req: http.IncomingMessage, res: http.ServerResponse, body: StubMessage | undefined) => void,
) => stubHttp(t, handle).then((s) => s.url);

/** Runs `switchyard probe --timeout-ms 500 URL`; kills it after `boundMs` (code null then). */
function probe(url: string, boundMs: number): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'probe', '--timeout-ms', '500', url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const kill = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.on('exit', (code) => {
      clearTimeout(kill);
      resolve({ code, stdout });
    });
  });
}

for (const [what, status, type] of [
  ['a 200 text/plain', 200, 'text/plain'],
  ['a 404 HTML page', 404, 'text/html'],
] as const) {
  test(`the fallback GET answered with ${what} that never ends: no era, within the step's time`, async (t) => {
    const url = await server(t, (req, res) => {
      if (req.method === 'POST') return void res.writeHead(405, { allow: 'GET' }).end();
      res.writeHead(status, { 'content-type': type });
      res.write('event: endpoint\ndata: /messages\n\n');
    });
    const r = await probe(url, 15_000);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, new RegExp(`^verdict: no era found: no HTTP\\+SSE stream either \\(HTTP ${status}, ${type}\\)$`, 'm'));
  });
}

test("the DELETE of the probe's session answered with a body that never ends: the verdict all the same", async (t) => {
  const url = await server(t, (req, res, body) => {
    if (req.method === 'DELETE') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('closing');
      return;
    }
    if (body?.method !== 'initialize') return void res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
    const result = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'slow-delete', version: '1' } };
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'one' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
  });
  const r = await probe(url, 15_000);
  assert.equal(r.code, 0, r.stdout);
  assert.match(r.stdout, /^verdict: 2025-11-25 over streamable-http$/m);
});
