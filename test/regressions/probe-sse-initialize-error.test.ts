// Found in review: an HTTP+SSE (2024-11-05) server whose `initialize` got only a JSON-RPC error
// counted as answered: `switchyard probe` named the era with nothing said, though no client can
// connect to such a server. The Streamable HTTP probe fails on an error answer to initialize
// (`initialize answered HTTP 200 with …`); over HTTP+SSE the endpoint event has named the era, so
// the verdict stands, as for no reply or an invalid one, but now warns, quoting the server's
// error for the operator. A client reads only its code (upstream-said-not-to-clients).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { operatorText, SwitchyardError } from '../../src/core/errors.js';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { CLI } from '../helpers/cli.js';
import { modernRequest, switchyard } from '../helpers/library.js';
import { probeSseStub } from '../helpers/stub-http.js';

const eras = await eraClients();
const SECRET = 'sk-live-5e1f0a9d77c3';
const REFUSAL = { code: -32603, message: `bad key ${SECRET}` };

/** An HTTP+SSE server (405 to a POST on /mcp, the endpoint event on GET) that answers every request with REFUSAL on its stream. */
const refusingSseServer = (t: Parameters<typeof probeSseStub>[0]) =>
  probeSseStub(t, (m) => (m?.id !== undefined ? { jsonrpc: '2.0', id: m.id, error: REFUSAL } : undefined));

const WARNING = `initialize answered with ${JSON.stringify(REFUSAL)}: the endpoint event names the era, but no client can connect to this server`;

test('probe: an HTTP+SSE initialize answered with a JSON-RPC error names the era and warns, quoting the error', async (t) => {
  const { url } = await refusingSseServer(t);
  const v = await probeUrl(url, eras, { timeoutMs: 2000 });
  assert.deepEqual([v.ok, v.era, v.transport, v.serverInfo, v.reason, v.clientReason], [true, '2024-11-05', 'http+sse', undefined, undefined, undefined]);
  const last = v.steps[v.steps.length - 1];
  assert.deepEqual(
    [last.request, last.status, last.note],
    ['POST /messages initialize', 202, 'reply read from the stream; but it is an error, not an InitializeResult'],
  );
  assert.deepEqual(v.warnings, [WARNING]);
});

test('switchyard probe prints the warning (operator output) and exits 0: the era is found', async (t) => {
  const { url } = await refusingSseServer(t);
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'probe', url], { encoding: 'utf8' });
  assert.match(stdout, /\nverdict: 2024-11-05 over http\+sse \(endpoint http:\/\/127\.0\.0\.1:\d+\/messages\?sessionId=s\)\n/);
  assert.ok(stdout.endsWith(`\nwarning: ${WARNING}\n`), stdout);
});

test("a gateway in front of it fails the upstream's start: the client reads the error code, the operator the server's words", async (t) => {
  const { url } = await refusingSseServer(t);
  const sy = switchyard(t, { requireUpstreams: true, upstreams: { u: { url } } });
  const err = await sy.ready().then(
    () => assert.fail('ready() resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SwitchyardError);
  const origin = new URL(url).origin;
  const message = 'Upstream protocol error: initialize failed: JSON-RPC error -32603 (upstream u)';
  assert.deepEqual([err.code, err.message], ['SWY_ERR_UPSTREAM_PROTOCOL', message]);
  const r = await sy.fetch(modernRequest('tools/list', {}, { url: 'http://127.0.0.1/u/mcp', id: 7 }));
  assert.equal(r.status, 502);
  assert.deepEqual(await r.json(), { jsonrpc: '2.0', id: 7, error: { code: -32603, message } });
  assert.ok(operatorText(err).includes(SECRET), operatorText(err));
  assert.ok(operatorText(err).startsWith(`Upstream protocol error: ${origin}: initialize failed: `), operatorText(err));
});
