// Found by a review of what a failed upstream start tells a client: the reason for an upstream
// that is down quoted what the upstream wrote, a 401 Bearer challenge's `error_description` or
// the message of its JSON-RPC error to `initialize`. An upstream that repeats the credential the
// gateway sent it (`token sk-… expired`) handed that credential, through a library gateway with
// `requireUpstreams`, to `ready()`'s caller and to every client. The message a client gets now
// says what failed in Switchyard's own words (the URL's origin, the status, the challenge's
// error code, the JSON-RPC error code); the upstream's text stays in the operator's lines (the
// `start failed` log line, the error's `operatorMessage`), as a stdio child's stderr does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { operatorText, SwitchyardError } from '../../src/core/errors.js';
import { modernRequest, switchyard } from '../helpers/library.js';
import { stubHttp } from '../helpers/stub-http.js';

const SECRET = 'sk-live-5e1f0a9d77c3';

/** Starts a library gateway with `requireUpstreams` over `upstream`; returns what ready() rejected with and what a client then gets. */
async function failedStart(t: Parameters<typeof switchyard>[0], upstream: Record<string, unknown>) {
  const sy = switchyard(t, { requireUpstreams: true, upstreams: { u: upstream } });
  const err = await sy.ready().then(
    () => assert.fail('ready() resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SwitchyardError);
  const r = await sy.fetch(modernRequest('tools/list', {}, { url: 'http://127.0.0.1/u/mcp', id: 7 }));
  const body = await r.text();
  assert.equal(r.status, 502);
  const logged = sy.records.filter((x) => x.msg === 'start failed').map((x) => String(x.err));
  return { err, body, logged };
}

/** Asserts the client's side is `message` without the secret, and the operator's side has it. */
function assertOperatorOnly(got: Awaited<ReturnType<typeof failedStart>>, message: string) {
  assert.equal(got.err.code, 'SWY_ERR_UPSTREAM_UNAVAILABLE');
  assert.equal(got.err.message, message);
  assert.deepEqual(JSON.parse(got.body), { jsonrpc: '2.0', id: 7, error: { code: -32000, message } });
  assert.ok(!got.body.includes(SECRET), got.body);
  assert.ok(operatorText(got.err).includes(SECRET), operatorText(got.err));
  assert.equal(got.logged.length, 1);
  assert.ok(got.logged[0].includes(SECRET), got.logged[0]);
}

test('an HTTP upstream whose 401 challenge quotes the credential: the client reads the status and the error code, the log the description', async (t) => {
  const { url } = await stubHttp(t, (_req, res) =>
    res.writeHead(401, { 'www-authenticate': `Bearer error="invalid_token", error_description="token ${SECRET} expired"` }).end(),
  );
  const origin = new URL(url).origin;
  const got = await failedStart(t, { url, headers: { Authorization: `Bearer ${SECRET}` } });
  assertOperatorOnly(got, `Upstream unavailable: HTTP 401: the server refused the credential sent (invalid_token) (upstream u)`);
  assert.equal(
    operatorText(got.err),
    `Upstream unavailable: ${origin}: HTTP 401: the server refused the credential sent (invalid_token: "token ${SECRET} expired") (upstream u)`,
  );
});

test('an HTTP upstream that refuses initialize with a JSON-RPC error quoting the credential: the client reads the error code', async (t) => {
  const { url } = await stubHttp(t, (_req, res, m) => {
    const error =
      m?.method === 'initialize' ? { code: -32603, message: `bad key ${SECRET}`, data: { key: SECRET } } : { code: -32601, message: 'Method not found' };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m?.id, error }));
  });
  const origin = new URL(url).origin;
  const got = await failedStart(t, { url });
  assertOperatorOnly(got, `Upstream unavailable: initialize answered HTTP 200 with JSON-RPC error -32603 (upstream u)`);
  // The upstream's address is the operator's too.
  assert.ok(!got.body.includes(origin.slice('http://'.length)), got.body);
  assert.ok(operatorText(got.err).includes(origin));
});

test('an HTTP upstream pinned to a 2025 revision that refuses initialize with a JSON-RPC error quoting the credential', async (t) => {
  const { url } = await stubHttp(t, (_req, res, m) =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: m?.id, error: { code: -32603, message: `bad key ${SECRET}` } })),
  );
  const origin = new URL(url).origin;
  const got = await failedStart(t, { url, era: '2025-06-18' });
  assert.equal(got.err.code, 'SWY_ERR_UPSTREAM_PROTOCOL');
  const message = `Upstream protocol error: initialize failed: JSON-RPC error -32603 (upstream u)`;
  assert.equal(got.err.message, message);
  assert.ok(!got.body.includes(SECRET), got.body);
  assert.ok(operatorText(got.err).includes(SECRET));
  assert.ok(got.logged[0].includes(SECRET));
  assert.ok(!got.body.includes(origin.slice('http://'.length)), got.body);
  assert.ok(operatorText(got.err).startsWith(`Upstream protocol error: ${origin}: `));
});

test('an HTTP upstream pinned to 2026-07-28 whose server/discover fails with a JSON-RPC error quoting the credential', async (t) => {
  const { url } = await stubHttp(t, (_req, res, m) =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: m?.id, error: { code: -32603, message: `bad key ${SECRET}` } })),
  );
  const origin = new URL(url).origin;
  const got = await failedStart(t, { url, era: '2026-07-28' });
  assert.equal(got.err.message, `Upstream protocol error: server/discover failed: JSON-RPC error -32603 (upstream u)`);
  assert.ok(!got.body.includes(SECRET), got.body);
  assert.ok(operatorText(got.err).includes(SECRET));
  assert.ok(got.logged[0].includes(SECRET));
  assert.ok(!got.body.includes(origin.slice('http://'.length)), got.body);
  assert.ok(operatorText(got.err).startsWith(`Upstream protocol error: ${origin}: `));
});

test('a stdio child that refuses initialize with a JSON-RPC error quoting the credential: the client reads the error code', async (t) => {
  const child = `
    const rl = require('node:readline').createInterface({ input: process.stdin });
    rl.on('line', (line) => {
      const m = JSON.parse(line);
      if (m.id === undefined) return;
      const error = m.method === 'initialize' ? { code: -32603, message: 'bad key ${SECRET}' } : { code: -32601, message: 'Method not found' };
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, error }) + '\\n');
    });`;
  const got = await failedStart(t, { command: process.execPath, args: ['-e', child] });
  assertOperatorOnly(got, 'Upstream unavailable: initialize failed: JSON-RPC error -32603 (upstream u)');
});
