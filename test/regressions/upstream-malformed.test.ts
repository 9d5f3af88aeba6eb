// Found by a trial (helper-27, 2026-12-05), with a stdio upstream that answers what is not valid
// JSON-RPC or MCP:
// - a result that is not an object went to 2026-07-28 clients as a success (the string spread
//   into an object: {"0":"n","1":"o",…}) and to 2025 clients as -32603 Internal error (a
//   TypeError in the encoder); a null result became {};
// - an error object with a string code and a number message was passed on verbatim;
// - a tools/list answered with an error stopped every 2026-07-28 tools/call (the gateway reads
//   the list for x-mcp-header annotations first, and failed the call with the list's error);
// - a tools/list with a null entry made every 2026-07-28 tools/call an Internal error (TypeError),
//   and on an aggregate mount broke the whole aggregate's tools/list, and the calls of the
//   healthy member, for every era.
// Each is now SWY_ERR_UPSTREAM_PROTOCOL (-32603 `Upstream protocol error: …`), a failed
// annotation list no longer stops the calls, and an aggregate leaves out a member whose list fails.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, post } from '../helpers/http.js';

const MALFORMED = path.join(REPO_ROOT, 'test/fixtures/malformed-server.mjs');
const command = (mode = 'ok') => `"${process.execPath}" "${MALFORMED}" ${mode}`;

type Answer = { status: number; result?: { content?: Array<{ text: string }>; tools?: Array<{ name: string }> }; error?: { code: unknown; message: unknown } };

/** A 2026-07-28 request to `url`. */
async function modern(url: string, method: string, params: Record<string, unknown> = {}): Promise<Answer> {
  const r = await post(url, modernBody(1, method, params), modernHeaders(method, typeof params.name === 'string' ? params.name : undefined));
  return { status: r.status, ...(r.json as object) };
}

/** A request in the 2025-11-25 session `h` at `url` (a JSON answer: nothing comes before it). */
async function session(url: string, h: Record<string, string>, method: string, params: Record<string, unknown> = {}): Promise<Answer> {
  const r = await post(url, { jsonrpc: '2.0', id: 1, method, params }, h);
  return { status: r.status, ...(r.json as object) };
}

const protocolError = (a: Answer, what: string) => {
  assert.equal(a.error?.code, -32603, `${what}: ${JSON.stringify(a)}`);
  assert.match(String(a.error?.message), /^Upstream protocol error: /, what);
  assert.equal(a.result, undefined, what);
};

test('an upstream result that is not an object, a missing result, and an error that is not a JSON-RPC error object are upstream protocol errors in every era', async (t) => {
  const gw = await gateway(t, { stdio: command() });
  const h = await initSession(gw.url, '2025-11-25');
  for (const name of ['string-result', 'null-result', 'no-result', 'bad-error']) {
    protocolError(await modern(gw.url, 'tools/call', { name, arguments: {} }), `2026-07-28 ${name}`);
    protocolError(await session(gw.url, h, 'tools/call', { name, arguments: {} }), `2025-11-25 ${name}`);
  }
  // The upstream and the gateway go on serving.
  assert.equal((await modern(gw.url, 'tools/call', { name: 'ok', arguments: {} })).result?.content?.[0].text, 'called ok');
  assert.equal((await session(gw.url, h, 'tools/call', { name: 'ok', arguments: {} })).result?.content?.[0].text, 'called ok');
});

test('a tools/list answered with an error reaches the client as that error, and 2026-07-28 tools/call still runs', async (t) => {
  const gw = await gateway(t, { stdio: command('error') });
  const list = await modern(gw.url, 'tools/list');
  assert.deepEqual(list.error, { code: -32603, message: 'list is broken today' });
  const call = await modern(gw.url, 'tools/call', { name: 'ok', arguments: {} });
  assert.equal(call.status, 200, JSON.stringify(call));
  assert.equal(call.result?.content?.[0].text, 'called ok');
});

test('a tools/list with a null entry or a tools member that is not an array is an upstream protocol error, and 2026-07-28 tools/call still runs', async (t) => {
  for (const mode of ['null-entry', 'not-array']) {
    const gw = await gateway(t, { stdio: command(mode) });
    protocolError(await modern(gw.url, 'tools/list'), `${mode}: tools/list`);
    const call = await modern(gw.url, 'tools/call', { name: 'ok', arguments: {} });
    assert.equal(call.result?.content?.[0].text, 'called ok', `${mode}: ${JSON.stringify(call)}`);
  }
});

test('an aggregate leaves out a member whose tools/list fails: the healthy member is listed and called in every era', async (t) => {
  const config = validateConfig(
    {
      listen: { port: 0 },
      upstreams: {
        good: { command: process.execPath, args: [MALFORMED, 'ok'] },
        broken: { command: process.execPath, args: [MALFORMED, 'null-entry'] },
        failing: { command: process.execPath, args: [MALFORMED, 'error'] },
      },
      aggregate: {},
    },
    'test',
  );
  const gw = await startGatewayFromConfig(config, pino({ level: 'silent' }));
  t.after(() => gw.close());
  const agg = gw.mounts.find((m) => m.name === 'aggregate')!.url;
  const names = ['good__ok', 'good__string-result', 'good__null-result', 'good__bad-error', 'good__no-result', 'good__huge'];
  const list = await modern(agg, 'tools/list');
  assert.deepEqual(
    list.result?.tools?.map((x) => x.name),
    names,
    JSON.stringify(list),
  );
  assert.equal((await modern(agg, 'tools/call', { name: 'good__ok', arguments: {} })).result?.content?.[0].text, 'called ok');
  const h = await initSession(agg, '2025-11-25');
  assert.deepEqual(
    (await session(agg, h, 'tools/list')).result?.tools?.map((x) => x.name),
    names,
  );
  assert.equal((await session(agg, h, 'tools/call', { name: 'good__ok', arguments: {} })).result?.content?.[0].text, 'called ok');
});

// Found by the same trial: a stdio line over maxUpstreamMessageBytes stops the child (it cannot be
// read past), and the call failed with `Upstream unavailable: child exited (SIGKILL)`, where
// docs/config.md names SWY_ERR_UPSTREAM_PROTOCOL.
test('a stdio line over maxUpstreamMessageBytes fails the call as an upstream protocol error; the child is restarted and serves again', async (t) => {
  const gw = await gateway(t, { stdio: command(), limits: { maxUpstreamMessageBytes: 65_536, upstreamBackoffMinMs: 50, upstreamBackoffMaxMs: 100 } });
  const huge = await modern(gw.url, 'tools/call', { name: 'huge', arguments: { bytes: 100_000 } });
  protocolError(huge, 'huge');
  assert.match(String(huge.error?.message), /a stdout line over maxUpstreamMessageBytes \(65536 bytes\); the child was stopped and is restarted/);
  let again: Answer | undefined;
  for (let i = 0; i < 100 && again?.result === undefined; i++) {
    again = await modern(gw.url, 'tools/call', { name: 'ok', arguments: {} });
    if (again.result === undefined) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(again?.result?.content?.[0].text, 'called ok', JSON.stringify(again));
});

// Found by the same trial: every routine upstream failure was logged twice, the access line and a
// `request failed` at error level with the gateway's own stack. An upstream's fault is now logged
// at warn as its code and message; the gateway's own faults stay at error with the stack.
test('a request failed by its upstream is logged once at warn with its code and message, no stack', async (t) => {
  const gw = await gateway(t, { stdio: command() });
  const h = await initSession(gw.url, '2025-11-25');
  protocolError(await modern(gw.url, 'tools/call', { name: 'string-result', arguments: {} }), '2026-07-28');
  protocolError(await session(gw.url, h, 'tools/call', { name: 'string-result', arguments: {} }), '2025-11-25');
  const failed = gw.records.filter((r) => r.msg === 'request failed');
  assert.equal(failed.length, 2, JSON.stringify(failed));
  for (const r of failed) {
    assert.equal(r.level, 40, JSON.stringify(r));
    assert.equal(r.code, 'SWY_ERR_UPSTREAM_PROTOCOL');
    assert.match(String(r.error), /^Upstream protocol error: tools\/call: a result that is not an object/);
    assert.equal(r.err, undefined, 'no error object, so no stack');
  }
});

// Found in review (2026-12-05): the aggregate's list, changed above to leave a failing member out,
// added each member's items with one `push(...items)`, which throws RangeError (the call stack)
// for a member listing some 130,000 items or more.
test('an aggregate lists a member with 200,000 tools', async (t) => {
  const config = validateConfig(
    { listen: { port: 0 }, upstreams: { many: { command: process.execPath, args: [MALFORMED, 'many-200000'] } }, aggregate: { path: '/all/mcp' } },
    'test',
  );
  const gw = await startGatewayFromConfig(config, pino({ level: 'silent' }));
  t.after(() => gw.close());
  const agg = gw.mounts.find((m) => m.name === 'aggregate')!.url;
  const list = await modern(agg, 'tools/list');
  assert.equal(list.result?.tools?.length, 200_006, JSON.stringify(list).slice(0, 300));
  assert.equal(list.result?.tools?.at(-1)?.name, 'many__t199999');
});
