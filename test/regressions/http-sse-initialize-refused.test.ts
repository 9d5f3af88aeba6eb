// Found by a client-author trial (h-trial12): an HTTP+SSE server whose endpoint refused the
// initialize POST (400, as the SDK's SSEServerTransport answers a message it cannot take; 404 for
// an unknown session; 500 'SSE connection not established') was waited on for a reply that could
// not come. `switchyard probe` waited its whole step time and then said `no reply on the stream
// within 5000 ms` and warned `initialize got no reply with its id`, though the server had
// answered HTTP 400; a gateway in front of it waited upstreamRequestTimeoutMs (30 s) at start and
// then failed with `initialize failed: no reply`. A POST answered 3xx-5xx now ends the wait at
// once, and both say the status, as the session's later POSTs already did (`POST answered HTTP N`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { CLI } from '../helpers/cli.js';
import { stubHttp } from '../helpers/stub-http.js';

const eras = await eraClients();

/** An HTTP+SSE server (405 on /mcp, the endpoint event on GET) whose endpoint answers every POST `status` with `body`. */
const refusingEndpoint = (t: Parameters<typeof stubHttp>[0], status: number, body: string) =>
  stubHttp(t, (req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages?sessionId=s\n\n');
      return;
    }
    if (req.url === '/mcp') return void res.writeHead(405, { allow: 'GET' }).end();
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
  });

for (const [status, body] of [
  [400, 'Invalid message'],
  [500, 'SSE connection not established'],
] as const) {
  test(`probe: an HTTP+SSE endpoint that answers initialize's POST ${status} is said to have refused it`, async (t) => {
    const s = await refusingEndpoint(t, status, body);
    const v = await probeUrl(s.url, eras, { timeoutMs: 3000 });
    assert.deepEqual([v.ok, v.era, v.transport], [true, '2024-11-05', 'http+sse']);
    assert.deepEqual(v.steps[v.steps.length - 1], {
      request: 'POST /messages initialize',
      status,
      excerpt: body,
      note: `the endpoint did not accept initialize (HTTP ${status}): no reply to wait for`,
    });
    assert.deepEqual(v.warnings, [
      `initialize failed (POST answered HTTP ${status}): the endpoint event names the era, but no client can connect to this server`,
    ]);
  });
}

test('gateway: an HTTP+SSE upstream whose endpoint refuses initialize fails the start with that status', async (t) => {
  const s = await refusingEndpoint(t, 400, 'Invalid message');
  const child = spawn(
    process.execPath,
    [CLI, '--port', '0', '--no-admin', '--log-level', 'silent', '--upstream', s.url, '--require-upstreams', '--limit', 'upstreamRequestTimeoutMs=3000'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  t.after(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.deepEqual(
    { code, stderr },
    {
      code: 1,
      stderr: `switchyard: SWY_ERR_UPSTREAM_PROTOCOL: Upstream protocol error: ${new URL(s.url).origin}: initialize failed: POST answered HTTP 400 (upstream default)\n`,
    },
  );
});
