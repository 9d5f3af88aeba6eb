// Found by a client-author trial of `switchyard probe` (helper h-probe, 2026-12-05): a fallback
// GET whose event stream the server ended at once, without an `endpoint` event, was reported as
// `no endpoint event within 10000 ms`, as if the probe had waited for a slow server; it had not
// waited at all. The reason now says the stream ended; a stream still open when the step's time
// runs out keeps the old reason.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { stubHttp } from '../helpers/stub-http.js';

const eras = await eraClients();

/** An HTTP+SSE-looking server on 127.0.0.1 port 0 (stubHttp): POST 405; GET a stream with one message event, ended when `end`. */
const server = (t: { after(fn: () => Promise<void>): void }, end: boolean): Promise<string> =>
  stubHttp(t, (req, res) => {
    if (req.method === 'POST') return void res.writeHead(405, { allow: 'GET' }).end();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}\n\n');
    if (end) res.end();
  }).then((s) => s.url);

test('a GET stream the server ends without an endpoint event: the reason says it ended', async (t) => {
  const url = await server(t, true);
  const v = await probeUrl(url, eras, { timeoutMs: 5000 });
  assert.equal(v.ok, false);
  assert.equal(v.reason, 'the stream ended without an endpoint event');
  assert.equal(v.steps[2].note, 'the stream ended without an endpoint event');
});

test('a GET stream still open without an endpoint event when the step ends: the reason names the wait', async (t) => {
  const url = await server(t, false);
  const v = await probeUrl(url, eras, { timeoutMs: 300 });
  assert.equal(v.ok, false);
  assert.equal(v.reason, 'no endpoint event within 300 ms');
});
