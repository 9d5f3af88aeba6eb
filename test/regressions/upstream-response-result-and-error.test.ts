// Known defect: an upstream response carrying both `result` and `error` passed as the upstream's
// error (a stdio child's, an HTTP upstream's on a POST or an HTTP+SSE stream), its message the
// upstream's own words handed to the client. JSON-RPC 2.0 §5: "Either the result member or error
// member MUST be included, but both members MUST NOT be included." Which one the upstream meant
// cannot be known, so it is now the upstream's protocol error (SWY_ERR_UPSTREAM_PROTOCOL, -32603)
// in Switchyard's words; the error member's code and message go to the operator's log line only.
// A response with neither is the same error (a stdio child's answer to the gateway's own
// initialize was taken as an empty result: `initialize settled on undefined`). The probe took
// such an answer to server/discover as a DiscoverResult; it is now no answer to it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { operatorText, SwitchyardError } from '../../src/core/errors.js';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { gateway, REPO_ROOT, type TestGateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';
import { httpSseStub, probeSseStub, sessionStub, stubHttp } from '../helpers/stub-http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/misanswering-server.mjs');
const command = (mode = 'ok') => `"${process.execPath}" "${FIXTURE}" ${mode}`;
const SECRET = 'sk-fixture-secret';
const SECRET_ERROR = { code: -32000, message: `bad key ${SECRET}` };
const BOTH = 'a response with both result and error (JSON-RPC 2.0 §5)';
const NEITHER = 'a response with neither result nor error (JSON-RPC 2.0 §5)';
const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
const eras = await eraClients();

/** A 2026-07-28 tools/call of tool `name` through the gateway: its body as text. */
async function call(gw: TestGateway, name: string): Promise<string> {
  return (await post(gw.url, modernBody(9, 'tools/call', { name, arguments: {} }), modernHeaders('tools/call', name))).text;
}

/** The body of the protocol error a client gets for tool `name`'s answer, `what`. */
const protocolError = (what: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 9, error: { code: -32603, message: `Upstream protocol error: tools/call: ${what}` } });

/** The `error` of each `request failed` line (the operator's text). */
const failed = (gw: TestGateway) => gw.records.filter((r) => r.msg === 'request failed').map((r) => r.error);

test('stdio: a response with both result and error is the upstream protocol error; its error message reaches the log only', async (t) => {
  const gw = await gateway(t, { stdio: command() });
  assert.equal(await call(gw, 'both'), protocolError(BOTH));
  assert.deepEqual(failed(gw), [`Upstream protocol error: tools/call: ${BOTH}; its error code -32000, message "bad key ${SECRET}"`]);
  // A response with neither: the same error, in its own words.
  assert.equal(await call(gw, 'neither'), protocolError(NEITHER));
});

/** Starts a library gateway with `requireUpstreams` over upstream `u`; returns what ready() rejected with. */
async function failedStart(t: Parameters<typeof switchyard>[0], upstream: Record<string, unknown>): Promise<SwitchyardError> {
  const sy = switchyard(t, { requireUpstreams: true, upstreams: { u: upstream } });
  const err = await sy.ready().then(
    () => assert.fail('ready() resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SwitchyardError);
  return err;
}

test("stdio: the gateway's own initialize answered with both, or neither, fails the start as such, the child's error message for the operator only", async (t) => {
  const both = await failedStart(t, { command: process.execPath, args: [FIXTURE, 'initialize-both'] });
  assert.deepEqual([both.code, both.message], ['SWY_ERR_UPSTREAM_UNAVAILABLE', `Upstream unavailable: initialize: ${BOTH} (upstream u)`]);
  assert.equal(operatorText(both), `Upstream unavailable: initialize: ${BOTH}; its error code -32000, message "bad key ${SECRET}" (upstream u)`);
  // Neither was taken as an empty InitializeResult.
  const neither = await failedStart(t, { command: process.execPath, args: [FIXTURE, 'initialize-neither'] });
  assert.deepEqual([neither.code, neither.message], ['SWY_ERR_UPSTREAM_UNAVAILABLE', `Upstream unavailable: initialize: ${NEITHER} (upstream u)`]);
});

test('Streamable HTTP (2025): a POST answered with both result and error is the upstream protocol error', async (t) => {
  const url = await sessionStub(t, {
    name: 'both',
    tool: 'both',
    call: (id, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, result: text('result half'), error: SECRET_ERROR })),
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2025-06-18' });
  assert.equal(await call(gw, 'both'), protocolError(BOTH));
  assert.deepEqual(failed(gw), [`Upstream protocol error: tools/call: ${BOTH}; its error code -32000, message "bad key ${SECRET}"`]);
});

test('HTTP+SSE: a reply on the stream with both result and error is the upstream protocol error', async (t) => {
  const url = await httpSseStub(t, 'sse-both', (m, write) => {
    if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'both', inputSchema: { type: 'object' } }] } });
    if (m.method === 'tools/call') return write({ id: m.id, result: text('result half'), error: SECRET_ERROR });
    if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2024-11-05' });
  assert.equal(await call(gw, 'both'), protocolError(BOTH));
  assert.deepEqual(failed(gw), [`Upstream protocol error: tools/call: ${BOTH}; its error code -32000, message "bad key ${SECRET}"`]);
});

test('probe: a server/discover answer with both a DiscoverResult and an error is no evidence of 2026-07-28', async (t) => {
  const { url } = await stubHttp(t, (_req, res, m) => {
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (m?.method === 'server/discover')
      return json({
        jsonrpc: '2.0',
        id: m.id,
        result: { supportedVersions: ['2026-07-28'], capabilities: {}, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'p', version: '1' } } },
        error: { code: -32601, message: 'Method not found' },
      });
    if (m?.method === 'initialize')
      return json({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'p', version: '1' } } });
    res.writeHead(405).end();
  });
  const v = await probeUrl(url, eras, { timeoutMs: 2000 });
  assert.deepEqual([v.ok, v.era, v.transport], [true, '2025-06-18', 'streamable-http']);
  assert.equal(v.steps[0].note, 'the reply carries both result and error: not a valid response (JSON-RPC 2.0 §5): try initialize');
});

test("probe: an HTTP+SSE server's initialize reply with both result and error is not read, and the verdict warns", async (t) => {
  const s = await probeSseStub(t, (m) => {
    const result = { protocolVersion: '2024-11-05', capabilities: {}, serverInfo: { name: 'p', version: '1' } };
    return { jsonrpc: '2.0', id: m?.id, result, error: { code: -32603, message: 'x' } };
  });
  const v = await probeUrl(s.url, eras, { timeoutMs: 2000 });
  const invalid = 'the reply carries both result and error: not a valid response (JSON-RPC 2.0 §5)';
  assert.deepEqual([v.ok, v.era, v.transport, v.serverInfo], [true, '2024-11-05', 'http+sse', undefined]);
  assert.equal(v.steps[v.steps.length - 1].note, `reply read from the stream; but ${invalid}`);
  assert.deepEqual(v.warnings, [`initialize: ${invalid}: the endpoint event names the era, but no client can connect to this server`]);
});
