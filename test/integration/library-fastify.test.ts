// The library's fastify plugin in a real host application on a real socket: its own context
// leaves the host's error handler, parsers, not-found handler and body limit alone; the host's
// onRequest/onResponse hooks see MCP traffic; identities come from the host; closing the host
// closes Switchyard.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { CHANNELS, createSwitchyard, hostIdentity, SwitchyardError } from '../../src/index.js';
import type { RequestStartMessage } from '../../src/core/diagnostics.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { listAndEcho, V2_MODES } from '../helpers/examples.js';
import { allOn, switchyard } from '../helpers/library.js';
import { startAuthServer } from '../fixtures/auth-server.js';

declare module 'fastify' {
  interface FastifyRequest {
    user: string | null;
  }
}

const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A host application with its own hooks, error and not-found handlers, a text parser and a 64-byte body limit. */
function hostApp(t: { after(fn: () => Promise<void>): void }) {
  const app = Fastify({ bodyLimit: 64 });
  const seen: Array<{ hook: string; method: string; url: string; status?: number }> = [];
  app.decorateRequest('user', null);
  app.addHook('onRequest', async (req) => {
    seen.push({ hook: 'onRequest', method: req.method, url: req.url });
    // The host's own (test) authentication: it trusts this header because it is the host.
    const u = req.headers['x-host-user'];
    if (typeof u === 'string') req.user = u;
  });
  app.addHook('onResponse', async (req, reply) => void seen.push({ hook: 'onResponse', method: req.method, url: req.url, status: reply.statusCode }));
  app.setErrorHandler((err: Error, _req, reply) => reply.code(418).send({ host: 'error handler', message: err.message }));
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ host: 'not found' }));
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_req, body, done) => done(null, { text: body }));
  app.post('/echo', async (req) => ({ got: req.body }));
  app.get('/boom', async () => {
    throw new Error('kaboom');
  });
  t.after(() => app.close());
  return { app, seen };
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

async function send(url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string) {
  const res = await request(url, { method, headers, body });
  const text = await res.body.text();
  return { status: res.statusCode, type: res.headers['content-type'], body: text ? (JSON.parse(text) as unknown) : undefined };
}

test('the plugin keeps to its own context: the host’s parsers, error and not-found handlers and body limit are untouched; its hooks see MCP requests', async (t) => {
  const sy = switchyard(t, { limits: { maxBodyBytes: 4096 } });
  const { app, seen } = hostApp(t);
  await app.register(sy.plugin, { identity: (req) => (req.user ? hostIdentity(req.user) : null) });
  const base = await listen(app);

  // The host's own routes behave as the host configured them.
  assert.deepEqual(await send(`${base}/echo`, 'POST', { 'content-type': 'application/json' }, '{"a":1}'), {
    status: 200,
    type: 'application/json; charset=utf-8',
    body: { got: { a: 1 } },
  });
  assert.deepEqual((await send(`${base}/echo`, 'POST', { 'content-type': 'text/plain' }, 'hi')).body, { got: { text: 'hi' } });
  assert.deepEqual(await send(`${base}/echo`, 'POST', { 'content-type': 'application/json' }, JSON.stringify({ pad: 'x'.repeat(100) })), {
    status: 418,
    type: 'application/json; charset=utf-8',
    body: { host: 'error handler', message: 'Request body is too large' },
  });
  assert.deepEqual((await send(`${base}/boom`, 'GET', {})).body, { host: 'error handler', message: 'kaboom' });
  assert.deepEqual(await send(`${base}/nope`, 'GET', {}), { status: 404, type: 'application/json; charset=utf-8', body: { host: 'not found' } });

  // MCP requests get Switchyard's bounds and answers, not the host's.
  const call = modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'y'.repeat(1000) } });
  const big = await send(`${base}/mcp`, 'POST', modernHeaders('tools/call', 'echo'), JSON.stringify(call));
  assert.equal(big.status, 200, 'a body over the host’s 64-byte limit but within maxBodyBytes');
  assert.deepEqual((big.body as { result: { content: unknown } }).result.content, [{ type: 'text', text: `Echo: ${'y'.repeat(1000)}` }]);
  assert.deepEqual(await send(`${base}/mcp`, 'POST', { ...H, 'content-type': 'text/plain' }, 'hi'), {
    status: 415,
    type: 'application/json',
    body: { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' } },
  });
  const tooBig = JSON.stringify({ ...call, pad: 'z'.repeat(5000) });
  assert.deepEqual(await send(`${base}/mcp`, 'POST', modernHeaders('tools/call', 'echo'), tooBig), {
    status: 413,
    type: 'application/json',
    body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Request body exceeds the limit' } },
  });

  // The host's hooks saw every request, MCP ones included, with the status sent.
  const mcp = seen.filter((s) => s.url === '/mcp');
  assert.deepEqual(mcp, [
    { hook: 'onRequest', method: 'POST', url: '/mcp' },
    { hook: 'onResponse', method: 'POST', url: '/mcp', status: 200 },
    { hook: 'onRequest', method: 'POST', url: '/mcp' },
    { hook: 'onResponse', method: 'POST', url: '/mcp', status: 415 },
    { hook: 'onRequest', method: 'POST', url: '/mcp' },
    { hook: 'onResponse', method: 'POST', url: '/mcp', status: 413 },
  ]);

  // The official v2 client, both eras, through the host's socket.
  for (const mode of V2_MODES) await listAndEcho(`${base}/mcp`, mode);
});

test('the identity is the host’s: what its hook verified reaches the request; without it, none', async (t) => {
  const sy = switchyard(t);
  const { app } = hostApp(t);
  await app.register(sy.plugin, { identity: (req) => (req.user ? hostIdentity(req.user, { scopes: ['tools'] }) : null) });
  const base = await listen(app);
  const started = allOn<RequestStartMessage>(t, CHANNELS.requestStart);
  const echo = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } }));
  assert.equal((await send(`${base}/mcp`, 'POST', { ...modernHeaders('tools/call', 'echo'), 'x-host-user': 'carol' }, echo)).status, 200);
  assert.equal((await send(`${base}/mcp`, 'POST', { ...modernHeaders('tools/call', 'echo'), authorization: 'Bearer unverified' }, echo)).status, 200);
  assert.deepEqual(
    started.filter((m) => m.ctx.method === 'tools/call').map((m) => m.ctx.identity),
    [{ issuer: 'switchyard:host', subject: 'carol', scopes: ['tools'], claims: {}, source: 'host' }, null],
  );
});

test('an HTTP error the host’s own hook throws on an MCP route goes to the host’s error handler, not to a 500 -32603', async (t) => {
  // Found by a helper: an onRequest authentication that refuses by throwing (as @fastify/jwt's
  // jwtVerify, @fastify/auth and @fastify/rate-limit do) got 500 "Internal error" on the MCP
  // path, logged as Switchyard's own fault, where the host's routes got its 401.
  const sy = switchyard(t);
  const { app } = hostApp(t);
  app.addHook('onRequest', async (req) => {
    if (req.headers['x-host-deny'] !== undefined) throw Object.assign(new Error('no credentials'), { statusCode: Number(req.headers['x-host-deny']) });
  });
  await app.register(sy.plugin);
  const base = await listen(app);
  const echo = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } }));
  for (const status of ['401', '429'])
    assert.deepEqual(await send(`${base}/mcp`, 'POST', { ...modernHeaders('tools/call', 'echo'), 'x-host-deny': status }, echo), {
      status: 418,
      type: 'application/json; charset=utf-8',
      body: { host: 'error handler', message: 'no credentials' },
    });
  assert.equal(sy.records.filter((r) => r.msg === 'internal error').length, 0);
  // fastify's own refusals on the MCP path stay Switchyard's catalogue answers.
  const ctype = await send(`${base}/mcp`, 'POST', { ...modernHeaders('tools/call', 'echo'), 'content-type': 'text/plain' }, echo);
  assert.equal(ctype.status, 415);
  assert.equal((ctype.body as { error: { code: number } }).error.code, -32000);
});

test('fastify’s app.log is a logger Switchyard takes, as documented: it type-checks and gets Switchyard’s lines', async (t) => {
  // Found by a helper embedding the library in TypeScript: `createSwitchyard({}, { log: app.log })`
  // (docs/embedding.md) did not compile, since `app.log` is a FastifyBaseLogger, not pino's Logger.
  // The host's logger here has only what FastifyBaseLogger has (a host's own `loggerInstance`).
  const lines: Array<{ level: string; obj: unknown; msg: unknown }> = [];
  const hostLogger = (bindings: Record<string, unknown>): FastifyBaseLogger => {
    const at =
      (level: string) =>
      (obj: unknown, msg?: unknown): void =>
        void lines.push({ level, obj: typeof obj === 'object' && obj !== null ? { ...bindings, ...obj } : obj, msg });
    return {
      level: 'debug',
      fatal: at('fatal'),
      error: at('error'),
      warn: at('warn'),
      info: at('info'),
      debug: at('debug'),
      trace: at('trace'),
      silent: () => {},
      child: (more) => hostLogger({ ...bindings, ...more }),
    };
  };
  const app = Fastify({ loggerInstance: hostLogger({}) });
  t.after(() => app.close());
  const sy = createSwitchyard({}, { log: app.log });
  // A host mistake (an identity that is not one) is logged at error through the host's logger.
  await app.register(sy.plugin, { identity: (req) => (req.headers['x-bad'] ? ({ id: 'alice' } as never) : hostIdentity('alice')) });
  const base = await listen(app);
  for (const mode of V2_MODES) await listAndEcho(`${base}/mcp`, mode);
  const echo = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } }));
  assert.equal((await send(`${base}/mcp`, 'POST', { ...modernHeaders('tools/call', 'echo'), 'x-bad': '1' }, echo)).status, 500);
  assert.ok(lines.some((l) => l.level === 'error' && l.msg === 'the host application passed an invalid identity'));
});

test('closing a host app that force-closes connections: calls that finish in one event-loop turn are all answered first', async (t) => {
  // Their timers expire together, so all but the first answer are held to the end of that turn
  // (end-batch.ts); the host then cuts every connection (forceCloseConnections) after preClose.
  const sy = switchyard(t);
  const app = Fastify({ forceCloseConnections: true });
  t.after(() => app.close());
  await app.register(sy.plugin);
  const base = await listen(app);
  const call = (id: number) =>
    send(
      `${base}/mcp`,
      'POST',
      modernHeaders('tools/call', 'slow'),
      JSON.stringify(modernBody(id, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 1_000 } })),
    );
  const started = allOn<RequestStartMessage>(t, CHANNELS.requestStart);
  const calls = Array.from({ length: 8 }, (_, i) => call(i + 1));
  // Every call admitted first (on a busy machine the last ones reached the host after close began,
  // and fastify refused them with 503), then close while they all still run.
  for (let i = 0; i < 200 && started.filter((m) => m.ctx.method === 'tools/call').length < 8; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(started.filter((m) => m.ctx.method === 'tools/call').length, 8, 'every call admitted');
  await app.close();
  const got = await Promise.all(calls);
  assert.deepEqual(
    got.map((r) => [r.status, (r.body as { id: number }).id]),
    Array.from({ length: 8 }, (_, i) => [200, i + 1]),
  );
});

test('closing the host app closes Switchyard: an open listen stream gets its final result and app.close() resolves', async (t) => {
  const sy = switchyard(t);
  const { app } = hostApp(t);
  await app.register(sy.plugin);
  const base = await listen(app);
  const res = await request(`${base}/mcp`, {
    method: 'POST',
    headers: modernHeaders('subscriptions/listen'),
    body: JSON.stringify(modernBody('L', 'subscriptions/listen', { notifications: { toolsListChanged: true } })),
  });
  assert.equal(res.headers['content-type'], 'text/event-stream');
  const text = res.body.text();
  await app.close();
  const events = (await text)
    .split('\n\n')
    .filter((e) => e.startsWith('event: message\ndata: '))
    .map((e) => JSON.parse(e.slice('event: message\ndata: '.length)) as { id?: unknown; method?: string });
  assert.deepEqual(
    events.map((e) => e.method ?? `result ${String(e.id)}`),
    ['notifications/subscriptions/acknowledged', 'result L'],
  );
  const after = await sy.fetch(
    new Request('http://127.0.0.1/mcp', { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(2, 'tools/list')) }),
  );
  assert.equal(after.status, 503);
});

test('a fastify prefix moves the MCP path; with HTTP+SSE on it is refused (the endpoint event names the config’s paths)', async (t) => {
  const sy = switchyard(t);
  const { app } = hostApp(t);
  await app.register(sy.plugin, { prefix: '/api' });
  const base = await listen(app);
  const r = await send(`${base}/api/mcp`, 'POST', modernHeaders('tools/list'), JSON.stringify(modernBody(1, 'tools/list')));
  assert.equal(r.status, 200);
  assert.deepEqual((await send(`${base}/mcp`, 'GET', { accept: 'text/event-stream' })).body, { host: 'not found' });

  const legacy = switchyard(t, { dialects: { legacySse: true } });
  const other = Fastify();
  t.after(() => other.close());
  await assert.rejects(
    async () => {
      await other.register(legacy.plugin, { prefix: '/api' });
      await other.ready();
    },
    (err: unknown) =>
      err instanceof SwitchyardError &&
      err.code === 'SWY_ERR_CONFIG_INVALID' &&
      err.message === 'Invalid configuration: HTTP+SSE names its message path in the endpoint event: set listen.path instead of a fastify prefix',
  );
});

test('two gateways in one host, each under its own prefix, both serve: their request decorators stay in their own contexts', async (t) => {
  const one = switchyard(t);
  const two = switchyard(t);
  const { app } = hostApp(t);
  await app.register(one.plugin, { prefix: '/one' });
  await app.register(two.plugin, { prefix: '/two' });
  const base = await listen(app);
  for (const prefix of ['/one', '/two']) {
    const r = await send(`${base}${prefix}/mcp`, 'POST', modernHeaders('tools/list'), JSON.stringify(modernBody(1, 'tools/list')));
    assert.equal(r.status, 200, prefix);
    assert.ok(Array.isArray((r.body as { result?: { tools?: unknown } }).result?.tools), prefix);
  }
});

test('a host whose own request decorators bear the names of the plugin\u2019s still registers it and serves (h-break: the plugin failed with FST_ERR_DEC_ALREADY_PRESENT)', async (t) => {
  const sy = switchyard(t);
  const { app } = hostApp(t);
  app.decorateRequest('switchyardAdmittedHead', 'host');
  app.decorateRequest('switchyardPastHostHooks', 'host');
  app.addHook('preHandler', async (req) => {
    assert.equal((req as unknown as Record<string, unknown>).switchyardAdmittedHead, 'host');
  });
  await app.register(sy.plugin);
  const base = await listen(app);
  const r = await send(`${base}/mcp`, 'POST', modernHeaders('tools/list'), JSON.stringify(modernBody(1, 'tools/list')));
  assert.equal(r.status, 200);
  assert.ok(Array.isArray((r.body as { result?: { tools?: unknown } }).result?.tools));
});

test('with auth a fastify prefix is refused (the audience and the RFC 9728 metadata URL name the config’s paths); listen.path works', async (t) => {
  const as = await startAuthServer(t, { machines: ['alice'] });
  const prefixed = switchyard(t, { auth: { bearer: { issuer: as.issuer } } });
  const other = Fastify();
  t.after(() => other.close());
  await assert.rejects(
    async () => {
      await other.register(prefixed.plugin, { prefix: '/api' });
      await other.ready();
    },
    (err: unknown) =>
      err instanceof SwitchyardError &&
      err.code === 'SWY_ERR_CONFIG_INVALID' &&
      err.message ===
        'Invalid configuration: auth names the MCP path in the token audience and the RFC 9728 metadata URL: set listen.path instead of a fastify prefix',
  );

  const sy = switchyard(t, { listen: { path: '/api' }, auth: { bearer: { issuer: as.issuer } } });
  const { app } = hostApp(t);
  await app.register(sy.plugin);
  const base = await listen(app);
  const refused = await request(`${base}/api/mcp`, { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(1, 'tools/list')) });
  await refused.body.dump();
  assert.equal(refused.headers['www-authenticate'], `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/api/mcp"`);
  assert.deepEqual((await send(`${base}/.well-known/oauth-protected-resource/api/mcp`, 'GET', {})).body, {
    resource: `${base}/api/mcp`,
    authorization_servers: [as.issuer],
    bearer_methods_supported: ['header'],
  });
  const token = await as.clientCredentialsToken(`${base}/api/mcp`, undefined, 'alice');
  const r = await send(
    `${base}/api/mcp`,
    'POST',
    { ...modernHeaders('tools/list'), authorization: `Bearer ${token}` },
    JSON.stringify(modernBody(1, 'tools/list')),
  );
  assert.equal(r.status, 200);
});

// fastify's inject() (how a host tests its app) builds requests without Node's `headersDistinct`;
// the refusal's log line read it, so a refused Origin or Host answered 500 there.
test('under fastify inject(), a refused Origin or Host is 403 with its catalogue message, not a 500; the refusal is logged with the header values', async (t) => {
  const sy = switchyard(t, { allowedHosts: ['app.example'] });
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy.plugin);
  await app.ready();
  const payload = JSON.stringify(modernBody(1, 'tools/list'));
  const ok = await app.inject({ method: 'POST', url: '/mcp', headers: { ...modernHeaders('tools/list'), host: 'app.example' }, payload });
  assert.equal(ok.statusCode, 200);
  const origin = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { ...modernHeaders('tools/list'), host: 'app.example', origin: 'http://evil.example' },
    payload,
  });
  assert.deepEqual([origin.statusCode, origin.json().error.message], [403, 'Forbidden: Origin not allowed']);
  const host = await app.inject({ method: 'POST', url: '/mcp', headers: { ...modernHeaders('tools/list'), host: 'evil.example' }, payload });
  assert.deepEqual([host.statusCode, host.json().error.message], [403, 'Forbidden: Host not allowed']);
  const logged = sy.records.filter((r) => r.reason !== undefined).map((r) => [r.origin, r.host]);
  assert.deepEqual(logged, [
    ['http://evil.example', 'app.example'],
    [undefined, 'evil.example'],
  ]);
});

// Found by a trial (2026-12-03): during app.close(), requests got fastify's own 503 body
// (`{"error":"Service Unavailable",…}`, its `return503OnClosing`), not the JSON-RPC error
// docs/embedding.md promised. A host that turns that off gets Switchyard's refusal.
for (const return503OnClosing of [false, true]) {
  const who = return503OnClosing ? 'fastify’s own 503 body (the default)' : '503 SWY_ERR_ADMISSION_SHUTTING_DOWN as a JSON-RPC error';
  test(`during app.close() of a host with return503OnClosing: ${return503OnClosing}, a new request gets ${who}`, async (t) => {
    const sy = switchyard(t);
    const app = Fastify({ return503OnClosing });
    t.after(() => app.close());
    await app.register(sy.plugin);
    const base = await listen(app);
    const started = allOn<RequestStartMessage>(t, CHANNELS.requestStart);
    const slow = send(
      `${base}/mcp`,
      'POST',
      modernHeaders('tools/call', 'slow'),
      JSON.stringify(modernBody(1, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 1_000 } })),
    );
    for (let i = 0; i < 200 && started.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    const closing = app.close();
    const late = await send(`${base}/mcp`, 'POST', modernHeaders('tools/list'), JSON.stringify(modernBody(2, 'tools/list')));
    assert.equal(late.status, 503);
    assert.match(String(late.type), /^application\/json/);
    assert.deepEqual(
      late.body,
      return503OnClosing
        ? { error: 'Service Unavailable', message: 'Service Unavailable', statusCode: 503 }
        : { jsonrpc: '2.0', id: 2, error: new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN').toRpcError() },
    );
    // The call that was running finishes within the grace period.
    assert.equal((await slow).status, 200);
    await closing;
  });
}
