// The era probe against real servers of each era and against stub servers that misbehave.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { promisify } from 'node:util';
import { eraClients } from '../../src/gateway.js';
import { buildChallenge } from '../../src/auth/challenge.js';
import { bearerChallenge, probeUrl } from '../../src/upstreams/probe.js';

const eras = await eraClients();
import { everythingHttp, modernHttp } from '../helpers/servers.js';
import { CLI } from '../helpers/cli.js';
import { gatewayFromConfig } from '../helpers/identity.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { stubHttp } from '../helpers/stub-http.js';

test('server-everything sse mode is 2024-11-05 over HTTP+SSE', async (t) => {
  const s = await everythingHttp(t, 'sse');
  const v = await probeUrl(s.url, eras);
  assert.equal(v.ok, true);
  assert.equal(v.era, '2024-11-05');
  assert.equal(v.transport, 'http+sse');
  assert.equal(v.serverInfo?.name, 'mcp-servers/everything');
  assert.deepEqual(
    v.steps.map((x) => x.status),
    [404, 404, 200, 202],
  );
});

test('server-everything streamableHttp mode is the 2025 era it negotiates', async (t) => {
  const s = await everythingHttp(t, 'streamableHttp');
  const v = await probeUrl(s.url, eras);
  assert.equal(v.ok, true);
  assert.equal(v.era, '2025-11-25');
  assert.equal(v.transport, 'streamable-http');
});

test('a v2 stateless server is 2026-07-28', async (t) => {
  const s = await modernHttp(t);
  const v = await probeUrl(s.url, eras);
  assert.equal(v.ok, true);
  assert.equal(v.era, '2026-07-28');
  assert.equal(v.transport, 'stateless-http');
  // The dual-era check the gateway's start runs too: a modern-only server refuses initialize.
  assert.deepEqual(
    v.steps.map((x) => [x.request, x.status, x.note]),
    [
      ['POST /mcp server/discover', 200, 'a DiscoverResult listing 2026-07-28: modern'],
      ['POST /mcp initialize', 400, 'no 2025 session: modern only'],
    ],
  );
  assert.equal(v.alsoSessions, undefined);
});

/** A stub server (stubHttp): `onRequest` gets each request and how many came so far. */
const stub = (t: { after(fn: () => Promise<void>): void }, onRequest: (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void) =>
  stubHttp(t, (req, res, _m, n) => onRequest(req, res, n));

for (const status of [400, 404, 405]) {
  test(`initialize answered ${status}: GET the same URL for an endpoint event`, async (t) => {
    const s = await stub(t, (req, res) => {
      if (req.method === 'POST' && req.url === '/mcp') return res.writeHead(status).end();
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: endpoint\ndata: /messages?sessionId=abc\n\n');
        return;
      }
      res.writeHead(202).end();
    });
    const v = await probeUrl(s.url, eras, { timeoutMs: 500 });
    assert.equal(v.ok, true);
    assert.equal(v.transport, 'http+sse');
    assert.equal(v.endpoint, s.url.replace('/mcp', '/messages?sessionId=abc'));
    assert.deepEqual(s.seen.slice(0, 3), ['POST /mcp server/discover', 'POST /mcp initialize', 'GET /mcp']);
  });
}

for (const status of [401, 403]) {
  test(`${status} is an authentication error, not era evidence: no fallback`, async (t) => {
    const s = await stub(t, (_req, res) => res.writeHead(status).end());
    const v = await probeUrl(s.url, eras);
    assert.equal(v.ok, false);
    assert.match(String(v.reason), new RegExp(`HTTP ${status}`));
    assert.deepEqual(s.seen, ['POST /mcp server/discover']);
  });
}

for (const status of [500, 503]) {
  test(`${status} is retried with backoff and never causes a fallback`, async (t) => {
    const s = await stub(t, (_req, res) => res.writeHead(status).end());
    const v = await probeUrl(s.url, eras, { tries: 3, backoffMs: 10 });
    assert.equal(v.ok, false);
    assert.deepEqual(s.seen, ['POST /mcp server/discover', 'POST /mcp server/discover', 'POST /mcp server/discover']);
  });
}

// Found by a client-author trial (h-t1, 2026-12-05): a 200 SSE answer whose event is not JSON was
// taken for a network failure (retried three times, "no answer", the reason a bare JSON.parse
// message, and an --upstream gateway logged "Upstream unavailable"), while the same garbage as a
// JSON body went on to initialize; and both ended as "initialize answered HTTP 200", as if the
// status were the trouble.
for (const kind of ['sse', 'json'] as const) {
  test(`a 200 answer that is not JSON-RPC (${kind}) is an answer without a usable message, asked once: initialize next, then no era, saying why`, async (t) => {
    const s = await stub(t, (_req, res) => {
      if (kind === 'sse') res.writeHead(200, { 'content-type': 'text/event-stream' }).end('event: message\ndata: {nope\n\n');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{{{not json');
    });
    const v = await probeUrl(s.url, eras, { tries: 3, backoffMs: 10 });
    assert.equal(v.ok, false);
    assert.deepEqual(s.seen, ['POST /mcp server/discover', 'POST /mcp initialize']);
    assert.equal(v.reason, 'initialize answered HTTP 200 without an InitializeResult');
    assert.equal(v.networkError, undefined);
    assert.equal(v.steps[0].status, 200);
    assert.equal(v.steps[0].note, 'not a DiscoverResult: try initialize');
    if (kind === 'sse') assert.match(String(v.steps[0].error), /^Upstream protocol error: invalid JSON in an SSE event \(/);
  });
}

test('a same-origin redirect is followed; another origin is refused', async (t) => {
  const s = await stub(t, (req, res) => {
    if (req.url === '/mcp') return res.writeHead(307, { location: '/v2/mcp' }).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ jsonrpc: '2.0', id: 'switchyard-probe-1', result: { supportedVersions: ['2026-07-28'], capabilities: {}, resultType: 'complete' } }),
    );
  });
  const v = await probeUrl(s.url, eras);
  assert.equal(v.ok, true);
  assert.equal(v.url, s.url.replace('/mcp', '/v2/mcp'));
  const away = await stub(t, (_req, res) => res.writeHead(307, { location: 'http://127.0.0.2:1/mcp' }).end());
  const w = await probeUrl(away.url, eras);
  assert.equal(w.ok, false);
  assert.match(String(w.reason), /another origin/);
});

// Found by a trial (2026-12-04): a server redirecting to itself was asked without end (257,244
// POSTs in 60 s, memory growing with the steps recorded), by `probe`, by `--upstream` at start
// (nothing listened) and by the breaker's trial probe at run time.
test('a same-origin redirect loop stops after 5 redirects: the probe fails, naming the loop, after 6 requests', async (t) => {
  let asked = 0;
  const s = await stub(t, (_req, res) => {
    asked++;
    res.writeHead(307, { location: '/mcp' }).end();
  });
  const v = await probeUrl(s.url, eras);
  assert.equal(v.ok, false);
  assert.match(String(v.reason), /more than 5 redirects/);
  assert.equal(asked, 6);
  assert.equal(v.steps.length, 6);
  assert.match(String(v.steps[5].note), /refused: more than 5 in a row/);
});

test('a GET stream that never sends endpoint, or names another origin, is no HTTP+SSE', async (t) => {
  const silent = await stub(t, (req, res) => {
    if (req.method === 'POST') return res.writeHead(405).end();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': hello\n\n');
  });
  const v = await probeUrl(silent.url, eras, { timeoutMs: 300 });
  assert.equal(v.ok, false);
  assert.match(String(v.reason), /no endpoint event within 300 ms/);
  const cross = await stub(t, (req, res) => {
    if (req.method === 'POST') return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('event: endpoint\ndata: http://127.0.0.9:9/messages\n\n');
  });
  const w = await probeUrl(cross.url, eras, { timeoutMs: 500 });
  assert.equal(w.ok, false);
  assert.match(String(w.reason), /another origin: refused/);
});

// JSON-RPC 2.0 §5: a response carries the id of the request it answers. A reply with another id
// answers some other request, whatever it says: it is no era evidence, at any step.
const notAnswer = (got: string, id: string) => `the reply has ${got}, not the request's "${id}": not an answer to it (JSON-RPC 2.0 §5)`;

test('a reply with another id is no answer: a DiscoverResult under id "other" is not 2026-07-28 (probe and CLI)', async (t) => {
  const s = await stub(t, (req, res) => {
    if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: 'other', result: { supportedVersions: ['2026-07-28'], capabilities: {} } }));
  });
  const v = await probeUrl(s.url, eras, { timeoutMs: 500 });
  assert.equal(v.ok, false);
  assert.equal(v.era, undefined);
  assert.deepEqual(
    v.steps.map((x) => [x.request, x.status, x.note]),
    [
      ['POST /mcp server/discover', 200, `${notAnswer('id "other"', 'switchyard-probe-1')}: try initialize`],
      ['POST /mcp initialize', 200, `${notAnswer('id "other"', 'switchyard-probe-2')}; HTTP 200 is not a fallback status (400, 404, 405)`],
    ],
  );
  assert.equal(v.reason, `initialize answered HTTP 200: ${notAnswer('id "other"', 'switchyard-probe-2')}`);
  // The command says so too, and exits 1 (no era found), not 0.
  const r = await promisify(execFile)(process.execPath, [CLI, 'probe', '--timeout-ms', '500', s.url], { encoding: 'utf8' }).then(
    (x) => ({ code: 0, stdout: x.stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
  assert.equal(r.code, 1);
  assert.match(r.stdout, /\nverdict: no era found: initialize answered HTTP 200: the reply has id "other"/);
});

test('a reply with another id is no answer: an InitializeResult under id "other" is not the 2025 era', async (t) => {
  const s = await stub(t, (req, res, n) => {
    if (n === 1) return res.writeHead(400).end();
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' });
    res.end(
      JSON.stringify({ jsonrpc: '2.0', id: 'other', result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'x', version: '1' } } }),
    );
  });
  const v = await probeUrl(s.url, eras, { timeoutMs: 500 });
  assert.equal(v.ok, false);
  assert.equal(v.transport, undefined);
  assert.equal(v.steps[1].note, `${notAnswer('id "other"', 'switchyard-probe-2')}; HTTP 200 is not a fallback status (400, 404, 405)`);
});

test('a reply with another id is no answer: over HTTP+SSE the step says so (the endpoint event still names the era)', async (t) => {
  let stream: http.ServerResponse | undefined;
  const s = await stub(t, (req, res) => {
    if (req.method === 'POST' && req.url === '/mcp') return res.writeHead(405, { allow: 'GET' }).end();
    if (req.method === 'GET') {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages?sessionId=abc\n\n');
      return;
    }
    res.writeHead(202).end();
    const reply = { jsonrpc: '2.0', id: 'other', result: { protocolVersion: '2024-11-05', capabilities: {}, serverInfo: { name: 'x', version: '1' } } };
    stream?.write(`event: message\ndata: ${JSON.stringify(reply)}\n\n`);
  });
  const v = await probeUrl(s.url, eras, { timeoutMs: 500 });
  assert.equal(v.ok, true);
  assert.equal(v.transport, 'http+sse');
  assert.equal(v.serverInfo, undefined);
  const last = v.steps[v.steps.length - 1];
  assert.deepEqual(
    [last.request, last.status, last.note],
    ['POST /messages initialize', 202, `${notAnswer('id "other"', 'switchyard-probe-3')}; no reply with its id within 500 ms`],
  );
  // Found by a trial: the verdict named the era with nothing said, though no client could connect.
  assert.deepEqual(v.warnings, [
    'initialize got no reply with its id within 500 ms: the endpoint event names the era, but no client can connect to this server',
  ]);
});

// Found by a trial: `probe --header "Authorization: Bearer bad.tok.en"` against a gateway with
// auth printed `HTTP 401: the server wants credentials (pass --header Authorization:…)`, asking
// for the header it had just sent. RFC 6750 §3.1: `invalid_token` (401) and `insufficient_scope`
// (403) say the credential was refused; the verdict says so, quoting the server's reasons.
async function probeCli(url: string, ...args: string[]): Promise<{ code: number; stdout: string }> {
  return promisify(execFile)(process.execPath, [CLI, 'probe', ...args, url], { encoding: 'utf8' }).then(
    (x) => ({ code: 0, stdout: x.stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
}

test('probe against a gateway with API keys: a refused key is named as refused, with the reason; no key still gets the hint to pass one', async (t) => {
  const key = 'k3y-for-probe_0123456789abcdefghijklmnop';
  const gw = await gatewayFromConfig(t, {
    auth: { apiKeys: [{ name: 'ci', sha256: createHash('sha256').update(key).digest('hex') }] },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const steps = (status: number, body: string) =>
    `1. POST /demo/mcp server/discover\n   → HTTP ${status}  ${body}\n   authentication required: not era evidence\n`;
  const refused = (message: string) => JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });

  assert.deepEqual(await probeCli(url, '--header', 'Authorization: Bearer bad.tok.en'), {
    code: 1,
    stdout:
      steps(401, refused('Unauthorized: invalid access token: unknown API key')) +
      'verdict: no era found: HTTP 401: the server refused the credential sent (invalid_token: "unknown API key")\n',
  });
  assert.deepEqual(await probeCli(url), {
    code: 1,
    stdout:
      steps(401, refused('Unauthorized: an access token is required')) +
      'verdict: no era found: HTTP 401: the server wants credentials (pass --header Authorization:…)\n',
  });
  assert.equal((await probeCli(url, '--header', `Authorization: Bearer ${key}`)).code, 0);
});

// Found by a trial: the gateway runs the same probe when it finds an HTTP upstream's era, and the
// upstream's lastError (/status.json, the log) told the operator to `pass --header
// Authorization:…`, a flag of `switchyard probe` that the gateway does not take. The gateway
// names the upstream's config keys (docs/config.md: `credentials`, `headers`) and its own flag.
test('a gateway whose HTTP upstream wants credentials: lastError names the config keys and --upstream-header, not probe --header', async (t) => {
  const key = 'k3y-for-upstream_0123456789abcdefghijklmnop';
  const guarded = await gatewayFromConfig(t, {
    auth: { apiKeys: [{ name: 'ci', sha256: createHash('sha256').update(key).digest('hex') }] },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const origin = new URL(guarded.urls[0]).origin;
  const gw = await gatewayFromConfig(t, {
    admin: false,
    // One attempt while the test looks: the next is a minute away.
    limits: { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 },
    upstreams: { guarded: { url: guarded.urls[0] } },
  });
  assert.equal(gw.supervised.get('guarded')?.state, 'down');
  assert.equal(
    gw.supervised.get('guarded')?.lastError,
    `Upstream unavailable: ${origin}: HTTP 401: the server wants credentials ` +
      '(give the upstream one in its config: `credentials`, or an Authorization entry in `headers`; with --upstream, --upstream-header Authorization:…)',
  );
});

// `probe --header "Authorization: Bearer a b"` against a gateway with API keys got 400 (RFC 6750
// §3.1 `invalid_request`: not one b64token) to server/discover and to initialize, took the 400 for
// the fallback status, and ended on "no HTTP+SSE stream either (HTTP 400, application/json)": the
// malformed header read as an era finding. A 400 whose Bearer challenge carries an `error` is
// an authentication refusal, as 401 and 403 are; the gateway's own discovery of an HTTP upstream
// (the same probe) marks the upstream down with the same reason, after one request.
test('a 400 with a Bearer challenge (invalid_request) is an authentication refusal, not era evidence: probe and upstream discovery stop at once', async (t) => {
  const key = 'k3y-for-probe_0123456789abcdefghijklmnop';
  const gw = await gatewayFromConfig(t, {
    auth: { apiKeys: [{ name: 'ci', sha256: createHash('sha256').update(key).digest('hex') }] },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const reason =
    'HTTP 400: the server refused the Authorization header sent as malformed (invalid_request: "the Bearer credential is not exactly one b64token")';
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32000, message: 'Bad Request: malformed Authorization header: the Bearer credential is not exactly one b64token' },
  });
  assert.deepEqual(await probeCli(url, '--header', 'Authorization: Bearer a b'), {
    code: 1,
    stdout:
      `1. POST /demo/mcp server/discover\n   → HTTP 400  ${body}\n   a Bearer challenge with an error: authentication refused, not era evidence\n` +
      `verdict: no era found: ${reason}\n`,
  });

  // The same header configured for an HTTP upstream: the gateway in front marks it down with that reason.
  const front = await gatewayFromConfig(t, {
    limits: { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 },
    upstreams: { behind: { url, headers: { Authorization: 'Bearer a b' } } },
  });
  const health = front.supervised.get('behind')!;
  assert.equal(health.state, 'down');
  assert.equal(health.lastError, `Upstream unavailable: ${new URL(url).origin}: ${reason}`);
});

test('a 400 to initialize with a Bearer error stops the probe there; a 400 with a bare Bearer challenge is still the fallback status', async (t) => {
  const refusing = await stub(t, (req, res, n) => {
    if (n === 1) return res.writeHead(400).end();
    res.writeHead(400, { 'www-authenticate': 'Bearer realm="r", error="invalid_request", error_description="two \\"Authorization\\" headers"' }).end();
  });
  const v = await probeUrl(refusing.url, eras, { headers: { Authorization: 'Bearer t' }, timeoutMs: 500 });
  assert.deepEqual(
    [v.ok, v.reason, v.steps.map((x) => [x.status, x.note])],
    [
      false,
      'HTTP 400: the server refused the Authorization header sent as malformed (invalid_request: "two \\"Authorization\\" headers")',
      [
        [400, 'HTTP 400 without a modern error body: try initialize'],
        [400, 'a Bearer challenge with an error: authentication refused, not era evidence'],
      ],
    ],
  );
  assert.deepEqual(refusing.seen, ['POST /mcp server/discover', 'POST /mcp initialize']);
  const bare = await stub(t, (req, res) => {
    if (req.method === 'POST') return res.writeHead(400, { 'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/x"' }).end();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('event: endpoint\ndata: /messages\n\n');
  });
  const w = await probeUrl(bare.url, eras, { timeoutMs: 300 });
  assert.deepEqual([w.transport, bare.seen.slice(0, 3)], ['http+sse', ['POST /mcp server/discover', 'POST /mcp initialize', 'GET /mcp']]);
});

test('probe against a gateway with JWT auth: a malformed token is refused (401 invalid_token), a token without the scope too (403 insufficient_scope)', async (t) => {
  const as = await startAuthServer(t, { machines: ['alice'] });
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer, scopes: ['mcp:read'] } },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const malformed = await probeUrl(url, eras, { headers: { authorization: 'Bearer bad.tok.en' } });
  assert.deepEqual([malformed.ok, malformed.reason], [false, 'HTTP 401: the server refused the credential sent (invalid_token: "malformed JWT")']);
  const writer = await as.clientCredentialsToken(url, 'mcp:write', 'alice');
  const narrow = await probeUrl(url, eras, { headers: { Authorization: `Bearer ${writer}` } });
  assert.deepEqual(
    [narrow.ok, narrow.steps.map((s) => s.status), narrow.reason],
    [false, [403], 'HTTP 403: the credential sent lacks the scope the server requires (insufficient_scope; it asks for scope "mcp:read")'],
  );
  const reader = await as.clientCredentialsToken(url, 'mcp:read', 'alice');
  assert.equal((await probeUrl(url, eras, { headers: { authorization: `Bearer ${reader}` } })).era, '2026-07-28');
});

test('bearerChallenge reads the Bearer challenge among several, unquoting its values', () => {
  const built = buildChallenge({ resourceMetadata: 'https://a.example/.well-known/x', error: 'invalid_token', errorDescription: 'say "no" \\ twice' });
  assert.deepEqual(bearerChallenge(built), {
    resource_metadata: 'https://a.example/.well-known/x',
    error: 'invalid_token',
    error_description: 'say "no" \\ twice',
  });
  assert.deepEqual(bearerChallenge(['Basic realm="r"', 'Negotiate abc==, bearer Error = insufficient_scope ,scope="a b", DPoP algs="ES256"']), {
    error: 'insufficient_scope',
    scope: 'a b',
  });
  assert.deepEqual(bearerChallenge('Bearer'), {});
  assert.equal(bearerChallenge('Basic realm="Bearer error=x"'), undefined);
  assert.equal(bearerChallenge(undefined), undefined);
});
