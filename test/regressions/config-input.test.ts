// Config input found by a user trial: `switchyard validate` accepted an upstream `url: 'http://'`
// (no host), `listen.host: 'a b'` and `$schema: 5`. Every URL and host the schema and its
// fragments take is now held to one rule (src/config/patterns.ts): an http(s) URL needs a host,
// a host is a host name or an IP address; and `$schema` is not coerced to a string. The flags
// and environment variables that set those keys go through the same validation.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { checkOpenListener } from '../../src/auth/open-listener.js';
import { createClusterRedis } from '../../src/cluster/redis.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { isLoopbackHost } from '../../src/core/loopback.js';
import { validateConfig, type ConfigIssue } from '../../src/config/load.js';
import { configFromOptions, envOverrides, overlay, type GatewayOptions } from '../../src/config/options.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post, send } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';
import { recordingLog, startRedis } from '../helpers/redis.js';
import { configIssuesOf } from '../helpers/config.js';

const run = promisify(execFile);
const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

const HOST = 'must be a host name or an IP address (e.g. localhost, my-host.example, 127.0.0.1, ::1)';
const HOST_PORT = 'must be a host, optionally with :port (e.g. app.example.com:443 or [::1])';
const HTTP_URL = 'must be an http:// or https:// URL with a host (e.g. https://mcp.example.com/mcp)';
const PUBLIC_URL =
  'must be an http:// or https:// URL with a host and a clean path (no empty, . or .. segment, no percent-encoding), without userinfo, query or fragment';
const REDIS_URL = 'must be a redis:// or rediss:// URL with a host (e.g. redis://redis:6379)';
const RESOURCE = 'must be an absolute URI; an http:// or https:// one needs a host';
const SCHEMA_REF = 'must be a string: the URI or path of the config schema, for editors';
const KEY = 'a'.repeat(43);

const issuesOf = configIssuesOf;

/** A config with `value` at `at` (a path of keys), and the JSON Pointer of that place. */
type Place = { name: string; pointer: string; config: (value: string) => unknown; message: string };
const EMBEDDED = { upstreams: { u: { transport: 'embedded' } } };
const withAuth = (bearer: object) => ({ ...EMBEDDED, auth: { bearer } });
const withCredentials = (credentials: object) => ({ upstreams: { u: { url: 'https://up.example/mcp', credentials } } });

const HTTP_URL_PLACES: Place[] = [
  { name: 'upstream url', pointer: '/upstreams/u/url', config: (v) => ({ upstreams: { u: { url: v } } }), message: HTTP_URL },
  { name: 'mcpServers url', pointer: '/mcpServers/u/url', config: (v) => ({ mcpServers: { u: { type: 'http', url: v } } }), message: HTTP_URL },
  { name: 'bearer issuer', pointer: '/auth/bearer/issuer', config: (v) => withAuth({ issuer: v }), message: HTTP_URL },
  {
    name: 'introspection endpoint',
    pointer: '/auth/bearer/introspection/endpoint',
    config: (v) => withAuth({ issuer: 'https://as.example', introspection: { endpoint: v, clientId: 'c', clientSecret: 's' } }),
    message: HTTP_URL,
  },
  {
    name: 'clientCredentials tokenUrl',
    pointer: '/upstreams/u/credentials/clientCredentials/tokenUrl',
    config: (v) => withCredentials({ clientCredentials: { tokenUrl: v, clientId: 'c', clientSecret: 's' } }),
    message: HTTP_URL,
  },
  {
    name: 'clientCredentials issuer',
    pointer: '/upstreams/u/credentials/clientCredentials/issuer',
    config: (v) => withCredentials({ clientCredentials: { issuer: v, clientId: 'c', clientSecret: 's' } }),
    message: HTTP_URL,
  },
  {
    name: 'clientCredentials resource',
    pointer: '/upstreams/u/credentials/clientCredentials/resource',
    config: (v) => withCredentials({ clientCredentials: { tokenUrl: 'https://as.example/token', clientId: 'c', clientSecret: 's', resource: v } }),
    message: RESOURCE,
  },
  {
    name: 'tokenExchange tokenUrl',
    pointer: '/upstreams/u/credentials/tokenExchange/tokenUrl',
    config: (v) => withCredentials({ tokenExchange: { tokenUrl: v, clientId: 'c', clientSecret: 's', audience: 'up' } }),
    message: HTTP_URL,
  },
  {
    name: 'tokenExchange issuer',
    pointer: '/upstreams/u/credentials/tokenExchange/issuer',
    config: (v) => withCredentials({ tokenExchange: { issuer: v, clientId: 'c', clientSecret: 's', audience: 'up' } }),
    message: HTTP_URL,
  },
  {
    name: 'tokenExchange resource',
    pointer: '/upstreams/u/credentials/tokenExchange/resource',
    config: (v) => withCredentials({ tokenExchange: { tokenUrl: 'https://as.example/token', clientId: 'c', clientSecret: 's', resource: v } }),
    message: RESOURCE,
  },
  { name: 'publicBaseUrl', pointer: '/publicBaseUrl', config: (v) => ({ ...EMBEDDED, publicBaseUrl: v }), message: PUBLIC_URL },
];

test("the trial's three inputs are refused by `switchyard validate`, each at its own path; the values at the limit pass", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-config-input-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  const bad = write('bad.yaml', "$schema: 5\nlisten:\n  host: 'a b'\nupstreams:\n  a:\n    url: 'http://'\n");
  await assert.rejects(run(process.execPath, [CLI, 'validate', bad]), (err: { code: number; stdout: string; stderr: string }) => {
    assert.equal(err.code, 1);
    assert.equal(err.stderr, '');
    assert.equal(err.stdout, `${bad}: invalid config, 3 errors\n  /$schema: ${SCHEMA_REF}\n  /listen/host: ${HOST}\n  /upstreams/a/url: ${HTTP_URL}\n`);
    return true;
  });
  const good = write('good.yaml', "$schema: '5'\nlisten:\n  host: 'my-host.example'\nupstreams:\n  a:\n    url: 'http://a'\n");
  // A host beyond loopback with no `auth` is refused as the start refuses it, unless told (validate-environment.test.ts).
  assert.equal((await run(process.execPath, [CLI, 'validate', good, '--allow-unauthenticated'])).stdout, 'ok: 1 upstream\n');
});

test('$schema: a string is taken as written; a number, boolean, null, list or map is refused with one message', () => {
  for (const ok of ['../src/config/schema.json', 'https://switchyard.invalid/schema/config.json', '5', ''])
    assert.deepEqual(issuesOf({ $schema: ok, ...EMBEDDED }), [], JSON.stringify(ok));
  for (const bad of [5, 0, true, false, null, [], ['x'], {}])
    assert.deepEqual(issuesOf({ $schema: bad, ...EMBEDDED }), [{ path: '/$schema', message: SCHEMA_REF }], JSON.stringify(bad));
});

test('every http(s) URL the config takes needs a host: http://a passes, http:// and the like are refused at their path', () => {
  // IPv6 with its last 32 bits dotted (RFC 3986 §3.2.2, e.g. NAT64) is an address like any other;
  // port 0 names no server, and a leading zero is refused rather than read two ways (a second trial).
  const accepted = [
    'http://a',
    'https://a/',
    'http://127.0.0.1:9/mcp',
    'http://[::1]:65535/mcp',
    'HTTPS://Mcp.Example.com/x?y#z',
    'http://my_svc:3000/mcp',
    'http://a:1/',
    'http://[64:ff9b::192.0.2.1]/',
    'http://[2001:db8::1.2.3.4]:8080/mcp',
  ];
  const refused = [
    'http://',
    'https://',
    'http:///x',
    'http://:80',
    'http://a:65536',
    'http://-',
    'http://a..b/',
    'http://999.1.1.1/',
    'http://?x',
    'http://a:0/',
    'http://a:080/',
  ];
  for (const place of HTTP_URL_PLACES) {
    for (const v of accepted) {
      // publicBaseUrl takes no query or fragment (its own rule, unchanged).
      if (place.pointer === '/publicBaseUrl' && /[?#]/.test(v)) continue;
      assert.deepEqual(issuesOf(place.config(v)), [], `${place.name} ${v}`);
    }
    for (const v of refused) assert.deepEqual(issuesOf(place.config(v)), [{ path: place.pointer, message: place.message }], `${place.name} ${v}`);
  }
  // An IPv6 literal that is not one fails the pattern and the uri format alike.
  assert.deepEqual(issuesOf({ upstreams: { u: { url: 'http://[::::]/' } } }), [
    { path: '/upstreams/u/url', message: HTTP_URL },
    { path: '/upstreams/u/url', message: 'must be an absolute URL' },
  ]);
  // A resource that is no http(s) URL is any absolute URI, as RFC 8707 has it.
  const exchange = (resource: string) => withCredentials({ tokenExchange: { tokenUrl: 'https://as.example/t', clientId: 'c', clientSecret: 's', resource } });
  assert.deepEqual(issuesOf(exchange('api://upstream')), []);
  assert.deepEqual(issuesOf(exchange('urn:example:upstream')), []);
});

test('cluster.redis needs a host: redis://a passes, redis:// and redis://:6379 are refused', () => {
  const redis = (v: string) => ({ ...EMBEDDED, cluster: { redis: v, key: KEY } });
  for (const v of ['redis://a', 'rediss://:secret@redis.example:6380/0', 'redis://[::1]:6379', 'redis://10.0.0.7']) assert.deepEqual(issuesOf(redis(v)), [], v);
  for (const v of ['redis://', 'redis://:6379', 'redis:///0', 'rediss://a:65536', 'redis://a b', 'http://a'])
    assert.deepEqual(issuesOf(redis(v)), [{ path: '/cluster/redis', message: REDIS_URL }], v);
});

test('listen.host and admin.host are a host name or an IP address: ::1, 127.0.0.1, localhost, my-host.example pass; "a b" and "" do not', () => {
  const accepted = [
    '::1',
    '127.0.0.1',
    'localhost',
    'my-host.example',
    '0.0.0.0',
    '::',
    'fe80::1',
    '::ffff:127.0.0.1',
    '255.255.255.255',
    'a',
    '64:ff9b::192.0.2.1',
    '2001:db8::1.2.3.4',
    '1:2:3:4:5:6:1.2.3.4',
  ];
  const refused = [
    'a b',
    '',
    '[::1]',
    '::1 ',
    '999.1.1.1',
    '256.0.0.1',
    '1.2.3',
    '-a',
    'a-',
    'a..b',
    '.a',
    ':::',
    '1::2::3',
    'host:80',
    '12345',
    '1:2:3:4:5:6:7:1.2.3.4',
    '::1.2.3',
  ];
  for (const v of accepted) {
    assert.deepEqual(issuesOf({ listen: { host: v }, ...EMBEDDED }), [], `listen ${v}`);
    assert.deepEqual(issuesOf({ admin: { host: v, port: 9 }, ...EMBEDDED }), [], `admin ${v}`);
  }
  for (const v of refused) {
    assert.deepEqual(issuesOf({ listen: { host: v }, ...EMBEDDED }), [{ path: '/listen/host', message: HOST }], `listen ${JSON.stringify(v)}`);
    assert.deepEqual(issuesOf({ admin: { host: v, port: 9 }, ...EMBEDDED }), [{ path: '/admin/host', message: HOST }], `admin ${JSON.stringify(v)}`);
  }
});

test('allowedHosts and allowedOrigins entries: the same hosts, IPv6 in brackets, a port up to 65535', () => {
  for (const v of ['localhost', '127.0.0.1', '[::1]', 'app.example.com:443', 'localhost:65535', 'my_svc:7600'])
    for (const key of ['allowedHosts', 'allowedOrigins']) assert.deepEqual(issuesOf({ [key]: [v], ...EMBEDDED }), [], `${key} ${v}`);
  for (const v of ['', 'a b', '::1', '[:::]', 'a:65536', '-', 'a..b', '999.1.1.1', 'a:'])
    for (const key of ['allowedHosts', 'allowedOrigins'])
      assert.deepEqual(issuesOf({ [key]: [v], ...EMBEDDED }), [{ path: `/${key}/0`, message: HOST_PORT }], `${key} ${JSON.stringify(v)}`);
});

test('--host, --upstream, --public-base-url, --redis and SWITCHYARD_HOST meet the same rules (the command line config)', async () => {
  const commandLine = (o: Partial<GatewayOptions>, env: Record<string, string> = {}): ConfigIssue[] => {
    try {
      // What effectiveConfig (src/cli/main.ts) validates when no --config is given.
      validateConfig(overlay(envOverrides(env), configFromOptions(o)), 'command line', { expandEnv: false });
      return [];
    } catch (err) {
      assert.ok(err instanceof SwitchyardError);
      return err.data?.errors as ConfigIssue[];
    }
  };
  assert.deepEqual(commandLine({ host: '::1', upstreamUrl: 'http://a', publicBaseUrl: 'http://a' }), []);
  assert.deepEqual(commandLine({}, { SWITCHYARD_HOST: 'localhost' }), []);
  assert.deepEqual(commandLine({ host: 'a b', upstreamUrl: 'http:///x', publicBaseUrl: 'http://', redis: 'redis://' }), [
    { path: '/cluster/key', message: 'is required with cluster.redis (set SWITCHYARD_CLUSTER_KEY: openssl rand -base64 32)' },
    { path: '/cluster/redis', message: REDIS_URL },
    { path: '/listen/host', message: HOST },
    { path: '/publicBaseUrl', message: PUBLIC_URL },
    { path: '/upstreams/default/url', message: HTTP_URL },
  ]);
  assert.deepEqual(commandLine({}, { SWITCHYARD_HOST: 'a b' }), [{ path: '/listen/host', message: HOST }]);

  // The real command: refused before anything listens, exit 2, every failing path on stderr.
  await assert.rejects(
    run(process.execPath, [CLI, '--host', 'a b', '--upstream', 'http:///x', '--public-base-url', 'http://', '--port', '0', '--no-admin']),
    (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 2);
      assert.match(err.stderr, /\n {2}\/listen\/host: must be a host name or an IP address/);
      assert.match(err.stderr, /\n {2}\/publicBaseUrl: must be an http:\/\/ or https:\/\/ URL with a host/);
      assert.match(err.stderr, /\n {2}\/upstreams\/default\/url: must be an http:\/\/ or https:\/\/ URL with a host/);
      return true;
    },
  );
  // --allowed-host is checked by commander with the schema's own pattern.
  await assert.rejects(run(process.execPath, [CLI, '--allowed-host', 'a..b', '--port', '0', '--no-admin']), (err: { code: number; stderr: string }) => {
    assert.equal(err.code, 2);
    assert.match(
      err.stderr,
      /argument 'a\.\.b' is invalid\. expected a host, optionally with :port \(e\.g\. app\.example\.com:443 or \[::1\]\), as allowedHosts in a config file\n/,
    );
    return true;
  });
});

test('publicBaseUrl needs a clean path, as the gateway does at start: validate no longer passes what the start refuses (a second trial)', () => {
  for (const v of [
    'https://mcp.example.com',
    'https://mcp.example.com/',
    'https://mcp.example.com/t',
    'https://mcp.example.com/t/',
    'https://mcp.example.com/a/b..c',
  ])
    assert.deepEqual(issuesOf({ ...EMBEDDED, publicBaseUrl: v }), [], v);
  for (const v of [
    'https://mcp.example.com/../x',
    'https://mcp.example.com/./x',
    'https://mcp.example.com//x',
    'https://mcp.example.com/a%2Fb',
    'https://mcp.example.com/t/..',
    'https://mcp.example.com/a//',
  ])
    assert.deepEqual(issuesOf({ ...EMBEDDED, publicBaseUrl: v }), [{ path: '/publicBaseUrl', message: PUBLIC_URL }], v);
});

test('cluster.redis takes its scheme in any case (RFC 3986 §3.1): REDIS:// and Rediss:// validate, and the client connects with REDIS://', async (t) => {
  const redis = (v: string) => ({ ...EMBEDDED, cluster: { redis: v, key: KEY } });
  for (const v of ['REDIS://redis:6379', 'Rediss://:secret@redis.example:6380/0', 'rEdIs://[::1]:6379', 'REDISS://10.0.0.7'])
    assert.deepEqual(issuesOf(redis(v)), [], v);
  for (const v of ['REDIS://', 'REDIS://:6379', 'REDI://a', 'REDISSS://a', 'HTTP://a'])
    assert.deepEqual(issuesOf(redis(v)), [{ path: '/cluster/redis', message: REDIS_URL }], v);
  // The URL goes to node-redis as written; WHATWG URL lower-cases the scheme for it.
  const server = await startRedis(t);
  const client = createClusterRedis({ url: `REDIS://127.0.0.1:${server.port}`, log: recordingLog().log });
  t.after(() => client.destroy());
  assert.equal(await client.waitUntilUp(10_000), true);
  assert.equal(await client.command(['PING']), 'PONG');
});

test('localhost. (the same name, RFC 1034 §3.1) is loopback as localhost is (RFC 6761 §6.3): an open gateway starts on it, Host checks stay on', async (t) => {
  for (const h of ['localhost.', 'LOCALHOST.', 'Localhost']) assert.equal(isLoopbackHost(h), true, h);
  for (const h of ['localhost..', '.localhost', 'localhost.example.', '[localhost]', 'localhost.:80']) assert.equal(isLoopbackHost(h), false, h);
  const open = [{ name: 'u', path: '/u/mcp', auth: undefined }];
  assert.doesNotThrow(() => checkOpenListener('localhost.', open, false));
  assert.throws(
    () => checkOpenListener('localhost.example.', open, false),
    (err) => err instanceof SwitchyardError && err.code === 'SWY_ERR_AUTH_OPEN_LISTENER',
  );

  // Validated and started as a file is, without auth: it binds loopback (`localhost`, so the
  // resolver's hosts file answers), and both listeners keep their loopback Host allowlist.
  const gw = await configGateway(t, { ...EMBEDDED, listen: { host: 'localhost.', port: 0 }, admin: { host: 'LOCALHOST.', port: 0 } }, { operations: true });
  assert.equal(gw.config.listen.host, 'localhost');
  assert.deepEqual(gw.config.admin, { host: 'LOCALHOST', port: 0, maxConnectionsPerAddress: 8 });
  const bound = gw.http.address();
  assert.equal(isLoopbackHost(bound.host), true, bound.host);
  const url = `http://${bound.host.includes(':') ? `[${bound.host}]` : bound.host}:${bound.port}/u/mcp`;
  assert.equal((await post(url, modernBody(1, 'tools/list'), modernHeaders('tools/list'))).status, 200);
  assert.equal((await post(url, modernBody(2, 'tools/list'), { ...modernHeaders('tools/list'), host: 'evil.example' })).status, 403);
  const admin = gw.admin!.address();
  assert.equal(isLoopbackHost(admin.host), true, admin.host);
  assert.equal((await send(`${admin.url}healthz`, 'GET', undefined, {})).status, 200);
  assert.deepEqual(await send(`${admin.url}healthz`, 'GET', undefined, { host: `evil.example:${admin.port}` }).then((r) => [r.status, r.json]), [
    403,
    { error: { code: 'SWY_ERR_ADMIN_HOST_FORBIDDEN', message: 'Forbidden: Host not allowed on the admin listener' } },
  ]);
});

test('a host name is at most 253 characters (254 with its trailing dot) and a label at most 63 (RFC 1035 §2.3.4), wherever a host is taken', () => {
  const label = (n: number) => 'a'.repeat(n);
  const n253 = [label(63), label(63), label(63), label(61)].join('.');
  const n254 = [label(63), label(63), label(63), label(62)].join('.');
  assert.deepEqual([n253.length, n254.length], [253, 254]);
  const places: Array<{ pointer: string; config: (host: string) => unknown; message: string }> = [
    { pointer: '/listen/host', config: (h) => ({ ...EMBEDDED, listen: { host: h } }), message: HOST },
    { pointer: '/admin/host', config: (h) => ({ ...EMBEDDED, admin: { host: h, port: 9 } }), message: HOST },
    { pointer: '/allowedHosts/0', config: (h) => ({ ...EMBEDDED, allowedHosts: [`${h}:443`] }), message: HOST_PORT },
    { pointer: '/allowedOrigins/0', config: (h) => ({ ...EMBEDDED, allowedOrigins: [h] }), message: HOST_PORT },
    { pointer: '/upstreams/u/url', config: (h) => ({ upstreams: { u: { url: `https://user:pw@${h}:8443/mcp` } } }), message: HTTP_URL },
    { pointer: '/publicBaseUrl', config: (h) => ({ ...EMBEDDED, publicBaseUrl: `https://${h}/` }), message: PUBLIC_URL },
    { pointer: '/cluster/redis', config: (h) => ({ ...EMBEDDED, cluster: { redis: `redis://${h}:6379/0`, key: KEY } }), message: REDIS_URL },
  ];
  for (const place of places) {
    for (const h of [n253, `${n253}.`, label(63), `${label(63)}.example`]) assert.deepEqual(issuesOf(place.config(h)), [], `${place.pointer} ${h.length}`);
    for (const h of [n254, `${n254}.`, `a.${n253}`, label(64), `${label(64)}.example`, `a.${label(64)}`])
      assert.deepEqual(issuesOf(place.config(h)), [{ path: place.pointer, message: place.message }], `${place.pointer} ${h.length}`);
  }
});

test('a config path naming a device or a huge file is refused after 4 MiB, not read whole (a trial saw /dev/zero read ~600 MB)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'config-size-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const big = path.join(dir, 'big.json');
  // Valid JSON of 4 MiB + 1 byte: refused for its size, not its content.
  writeFileSync(big, `{}${' '.repeat(4 * 1024 * 1024 - 1)}`);
  const atLimit = path.join(dir, 'limit.json');
  writeFileSync(atLimit, `{}${' '.repeat(4 * 1024 * 1024 - 2)}`);
  for (const file of ['/dev/zero', big]) {
    const r = await run(process.execPath, [CLI, 'validate', file]).then(
      () => ({ code: 0, stdout: '' }),
      (e: { code: number; stdout: string }) => e,
    );
    assert.equal(r.code, 1, file);
    assert.match(r.stdout, /larger than 4194304 bytes: not a config file/, file);
  }
  const ok = await run(process.execPath, [CLI, 'validate', atLimit]);
  assert.match(ok.stdout, /^ok: /);
});

test('YAML text that reads as a number keeps its text in string fields: 00123, 0x1F, 1.50 and 23 digits are not rewritten (a trial saw PIN 000042 become 42)', async (t) => {
  const { loadConfig } = await import('../../src/config/load.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'config-numbers-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'c.yaml');
  writeFileSync(
    file,
    [
      'limits: { requestTimeoutMs: 1e3, maxSessions: 500 }',
      'upstreams:',
      '  u:',
      '    url: http://127.0.0.1:9/mcp',
      '    headers: { X-A: 00123, X-C: 12345678901234567890123, X-D: 0x1F, X-B: 1e3, X-E: 42 }',
      '  s:',
      '    command: echo',
      '    args: [08080, 1.50, 8080]',
      '    env: { PIN: 000042 }',
      '',
    ].join('\n'),
  );
  const c = await loadConfig(file);
  const u = c.upstreams.u as { headers?: Record<string, string> };
  const st = c.upstreams.s as { args?: string[]; env?: Record<string, string> };
  assert.deepEqual(u.headers, { 'X-A': '00123', 'X-C': '12345678901234567890123', 'X-D': '0x1F', 'X-B': '1e3', 'X-E': '42' });
  assert.deepEqual(st.args, ['08080', '1.50', '8080']);
  assert.deepEqual(st.env, { PIN: '000042' });
  // Number fields still take numbers written as JSON writes them, and refuse the rest.
  assert.equal(c.limits.requestTimeoutMs, 1000);
  assert.equal(c.limits.maxSessions, 500);
  writeFileSync(file, 'listen: { port: 0x10 }\n');
  await assert.rejects(loadConfig(file), (err: { data?: { errors?: ConfigIssue[] } }) =>
    (err.data?.errors ?? []).some((e) => e.path === '/listen/port' && /written in decimal/.test(e.message)),
  );
});
