// The config loader: formats, defaults, every failing path, ${VAR}, mcpServers normalization, freezing, `switchyard validate`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { SwitchyardError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { listMounts, loadConfig, parseConfigText, validateConfig, type ConfigIssue, type FrozenConfig } from '../../src/config/load.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const run = promisify(execFile);

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The issues validateConfig reports for `value`, or fails when it validates. */
function issuesOf(value: unknown, env: Record<string, string> = {}): ConfigIssue[] {
  try {
    validateConfig(value, 'test', { env, baseDir: '/base' });
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    assert.equal(err.data?.source, 'test');
    return err.data?.errors as ConfigIssue[];
  }
  assert.fail('expected SWY_ERR_CONFIG_INVALID');
}

const DIALECTS = { modern: true, streamable: true, legacySse: false };

test('any value either validates or throws SWY_ERR_CONFIG_INVALID with at least one issue, never anything else', () => {
  const json = fc.jsonValue({ maxDepth: 2 });
  const upstream = fc.dictionary(
    fc.constantFrom('command', 'url', 'args', 'env', 'headers', 'era', 'type', 'transport', 'path', 'dialects', 'limits', 'disabled', 'cwd', 'isolation'),
    fc.oneof(json, fc.constantFrom('x', 'https://e.com/mcp', 'sse', '/p/mcp', '${UNSET}')),
  );
  const nested = fc.dictionary(fc.constantFrom('path', 'upstreams', 'port', 'host', 'legacySse', 'modern', 'separator'), json);
  const config = fc
    .record({
      upstreams: fc.dictionary(fc.constantFrom('a', 'b', 'a__b', 'bad name'), fc.oneof(upstream, json)),
      other: fc.dictionary(
        fc.constantFrom('listen', 'dialects', 'limits', 'aggregate', 'mcpServers', 'allowedOrigins', 'logLevel', 'x'),
        fc.oneof(json, nested),
      ),
    })
    .map(({ upstreams, other }) => ({ upstreams, ...other }));
  fc.assert(
    fc.property(fc.oneof(config, json), (value) => {
      try {
        validateConfig(value, 'test', { env: {} });
      } catch (err) {
        assert.ok(err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID', String(err));
        assert.ok((err.data?.errors as ConfigIssue[]).length > 0);
      }
    }),
    { numRuns: 500 },
  );
});

test('a minimal file gets every default, exactly', () => {
  const c = validateConfig({ upstreams: { everything: { command: 'npx', args: ['-y', 'x'] } } }, 'test', { env: {} });
  assert.deepEqual(c, {
    listen: { host: '127.0.0.1', port: 7600, path: '' },
    dialects: DIALECTS,
    allowedOrigins: ['localhost', '127.0.0.1', '[::1]'],
    allowedHosts: [],
    trustProxy: false,
    logLevel: 'info',
    limits: DEFAULT_LIMITS,
    strict: 'off',
    cache: { ttlMs: 0, cacheScope: 'private' },
    listCache: { ttlMs: 5000, maxAgeMs: 600_000, maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 },
    admin: { host: '127.0.0.1', port: 7601, maxConnectionsPerAddress: 8 },
    requireUpstreams: false,
    accessLogLevel: 'info',
    upstreams: {
      everything: {
        name: 'everything',
        path: '/everything/mcp',
        optional: false,
        dialects: DIALECTS,
        limits: DEFAULT_LIMITS,
        transport: 'stdio',
        command: 'npx',
        args: ['-y', 'x'],
        env: {},
        era: 'auto',
      },
    },
  });
});

test('an empty config serves the embedded demo as upstream default at /mcp', () => {
  const c = validateConfig({}, 'test', { env: {} });
  assert.deepEqual(c.upstreams, {
    default: { name: 'default', path: '/mcp', optional: false, dialects: DIALECTS, limits: DEFAULT_LIMITS, transport: 'embedded' },
  });
});

test('an HTTP upstream gets its defaults; per-mount dialects and limits merge over the top level', () => {
  const c = validateConfig(
    {
      dialects: { legacySse: true },
      limits: { requestTimeoutMs: 1000 },
      upstreams: { api: { url: 'https://api.example.com/mcp', dialects: { modern: false }, limits: { maxSessions: 5 } } },
    },
    'test',
    { env: {} },
  );
  assert.deepEqual(c.upstreams.api, {
    name: 'api',
    path: '/api/mcp',
    optional: false,
    dialects: { modern: false, streamable: true, legacySse: true },
    limits: { ...DEFAULT_LIMITS, requestTimeoutMs: 1000, maxSessions: 5 },
    transport: 'http',
    url: 'https://api.example.com/mcp',
    headers: {},
    era: 'auto',
    isolation: 'per-session',
    forwardAuthorization: false,
  });
  assert.deepEqual(c.limits, { ...DEFAULT_LIMITS, requestTimeoutMs: 1000 });
  assert.deepEqual(c.dialects, { modern: true, streamable: true, legacySse: true });
});

test('the result is deep-frozen and the input is left as it was', () => {
  const input = { upstreams: { a: { command: 'x', env: { K: 'v' } } }, aggregate: {} };
  const before = structuredClone(input);
  const c = validateConfig(input, 'test', { env: {} });
  assert.deepEqual(input, before);
  const frozen = (v: unknown): boolean => v === null || typeof v !== 'object' || (Object.isFrozen(v) && Object.values(v).every(frozen));
  assert.ok(frozen(c));
  assert.throws(() => {
    (c.listen as { port: number }).port = 1;
  }, TypeError);
  assert.throws(() => {
    (c.upstreams.a as { env: Record<string, string> }).env.K = 'w';
  }, TypeError);
});

test('every failing path is listed, sorted, in one error', () => {
  const issues = issuesOf({
    listn: {},
    listen: { port: 70000, path: '/gw/' },
    logLevel: 'loud',
    limits: { maxBodyBytes: 0, keepaliveMs: 2147483648, foo: 1 },
    allowedOrigins: ['https://app.example.com'],
    upstreams: {
      'bad name': { command: 'x' },
      both: { command: 'x', url: 'https://e.com' },
      none: { comand: 'x' },
      h: { url: 'ftp://e.com', era: '2099-01-01', env: {}, headers: { 'Mcp-Session-Id': 'x', 'bad header': 'y' } },
      s: { command: 'x', isolation: 'shared', limits: { maxConnections: 5 } },
    },
  });
  assert.deepEqual(issues, [
    { path: '/allowedOrigins/0', message: 'must be a host, optionally with :port (e.g. app.example.com:443 or [::1])' },
    { path: '/limits/foo', message: 'is not a known key' },
    { path: '/limits/keepaliveMs', message: 'must be <= 2147483647' },
    { path: '/limits/maxBodyBytes', message: 'must be >= 1' },
    {
      path: '/listen/path',
      message:
        "must be '' or a path like /a/b (no trailing slash, query or fragment, and no . or .. segment, which clients resolve away before they send a request)",
    },
    { path: '/listen/port', message: 'must be <= 65535' },
    { path: '/listn', message: 'is not a known key (did you mean `listen`?)' },
    { path: '/logLevel', message: 'must be one of: fatal, error, warn, info, debug, trace, silent' },
    { path: '/upstreams/bad name', message: 'is not a valid name: must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -' },
    { path: '/upstreams/both', message: 'has both `command` (stdio) and `url` (HTTP); keep one' },
    { path: '/upstreams/h/env', message: 'is not allowed on an HTTP upstream (one with `url`)' },
    { path: '/upstreams/h/era', message: 'must be one of: auto, match-client, 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28' },
    { path: '/upstreams/h/headers/Mcp-Session-Id', message: 'is set by Switchyard on each request; remove it' },
    { path: '/upstreams/h/headers/bad header', message: 'is not a valid name: must be an HTTP header name (an RFC 9110 token)' },
    { path: '/upstreams/h/url', message: 'must be an http:// or https:// URL with a host (e.g. https://mcp.example.com/mcp)' },
    { path: '/upstreams/none', message: 'needs `command` (a stdio upstream), `url` (an HTTP upstream) or `transport: embedded` (the demo server)' },
    { path: '/upstreams/none/comand', message: 'is not a known key (did you mean `command`?)' },
    { path: '/upstreams/s/isolation', message: 'is not allowed on a stdio upstream (one with `command`)' },
    { path: '/upstreams/s/limits/maxConnections', message: 'is not a known key' },
  ]);
});

test('upstreams or mcpServers: at most one, with at least one entry (neither: the embedded demo)', () => {
  assert.deepEqual(issuesOf({ upstreams: { a: { command: 'x' } }, mcpServers: { b: { command: 'y' } } }), [
    { path: '', message: 'has both `upstreams` and `mcpServers`; use one' },
  ]);
  assert.deepEqual(issuesOf({ upstreams: {} }), [{ path: '/upstreams', message: 'must name at least one upstream' }]);
  // Found by h-scope: every empty object the schema refuses read "must name at least one upstream".
  assert.deepEqual(issuesOf({ mcpServers: {} }), [{ path: '/mcpServers', message: 'must name at least one upstream' }]);
  assert.deepEqual(issuesOf({ auth: {} }), [{ path: '/auth', message: 'must set at least one of `bearer`, `apiKeys`, `none`, `stdio`' }]);
  assert.deepEqual(issuesOf({ upstreams: { h: { url: 'http://127.0.0.1:1/mcp', credentials: {} } } }), [
    { path: '/upstreams/h/credentials', message: 'must set at least one of `headers`, `clientCredentials`, `tokenExchange`' },
  ]);
  assert.deepEqual(issuesOf({ upstreams: { h: { url: 'http://127.0.0.1:1/mcp', credentials: { headers: {} } } } }), [
    { path: '/upstreams/h/credentials/headers', message: 'must have at least one entry' },
  ]);
  assert.deepEqual(issuesOf(null), [{ path: '', message: 'must be an object (a YAML mapping)' }]);
  assert.deepEqual(issuesOf([{ upstreams: {} }]), [{ path: '', message: 'must be an object (a YAML mapping)' }]);
});

test('cross-field checks: dialects, aggregate names, separator, path collisions, Authorization', () => {
  assert.deepEqual(
    issuesOf({
      upstreams: {
        a: { command: 'x', dialects: { modern: false, streamable: false } },
        b__c: { url: 'https://e.com/mcp', headers: { authorization: 'Bearer x' }, forwardAuthorization: true, path: '/a/mcp' },
      },
      aggregate: { upstreams: ['b__c', 'zz'] },
    }),
    [
      { path: '/aggregate/separator', message: 'occurs in upstream name b__c, so prefixed names would be ambiguous' },
      { path: '/aggregate/upstreams/1', message: 'no upstream is named zz' },
      { path: '/upstreams/a/dialects', message: 'turns every dialect off; keep at least one of modern, streamable, legacySse' },
      { path: '/upstreams/b__c/headers/authorization', message: 'conflicts with `forwardAuthorization: true`; use one' },
      { path: '/upstreams/b__c/path', message: '/a/mcp is already served by upstream a' },
    ],
  );
  // The HTTP+SSE sibling paths count: /x/mcp with legacySse serves /x/sse and /x/messages.
  assert.deepEqual(issuesOf({ dialects: { legacySse: true }, upstreams: { x: { command: 'x' }, y: { command: 'y', path: '/x/sse' } } }), [
    { path: '/upstreams/y/path', message: '/x/sse is already served by upstream x' },
    { path: '/upstreams/y/path', message: '/x/messages is already served by upstream x' },
  ]);
  assert.deepEqual(
    issuesOf({ dialects: { modern: false, streamable: false }, upstreams: { x: { command: 'x', dialects: { modern: true } } }, aggregate: {} }),
    [{ path: '/dialects', message: 'turns every dialect off for the aggregate mount; keep at least one' }],
  );
});

test('${VAR} and ${VAR:-default} expand in string values, with scalars coerced to the schema type', () => {
  const c = validateConfig(
    {
      listen: { port: '${PORT}', host: '${HOST:-0.0.0.0}' },
      requestStateKey: '${KEY}',
      upstreams: {
        a: { command: '${BIN}', args: ['--x=${EMPTY:-fallback}', '$${LITERAL}', 8080], env: { TOKEN: 'Bearer ${TOKEN}', N: 1 } },
        b: { url: 'https://${HOSTNAME}/mcp', headers: { 'X-Key': '${TOKEN}' }, forwardAuthorization: '${FWD:-false}' },
      },
    },
    'test',
    { env: { PORT: '8000', KEY: 'k'.repeat(32), BIN: '/usr/bin/srv', EMPTY: '', TOKEN: 's3cret', HOSTNAME: 'mcp.example.com' } },
  );
  assert.deepEqual(c.listen, { port: 8000, host: '0.0.0.0', path: '' });
  assert.equal(c.requestStateKey, 'k'.repeat(32));
  assert.deepEqual(c.upstreams.a, {
    ...c.upstreams.a,
    command: '/usr/bin/srv',
    args: ['--x=fallback', '${LITERAL}', '8080'],
    env: { TOKEN: 'Bearer s3cret', N: '1' },
  });
  assert.equal(c.upstreams.b.transport, 'http');
  if (c.upstreams.b.transport === 'http') {
    assert.equal(c.upstreams.b.url, 'https://mcp.example.com/mcp');
    assert.deepEqual(c.upstreams.b.headers, { 'X-Key': 's3cret' });
    assert.equal(c.upstreams.b.forwardAuthorization, false);
  }
});

test('a missing ${VAR} is an error naming the path and the variable; that value gets no other error', () => {
  assert.deepEqual(
    issuesOf({
      requestStateKey: '${STATE_KEY}',
      upstreams: { a: { url: '${URL}', headers: { Authorization: 'Bearer ${TOKEN}', X: '${bad name}', Y: '${UNCLOSED' } } },
    }),
    [
      { path: '/requestStateKey', message: 'environment variable STATE_KEY is not set (write ${STATE_KEY:-default} for a default)' },
      { path: '/upstreams/a/headers/Authorization', message: 'environment variable TOKEN is not set (write ${TOKEN:-default} for a default)' },
      { path: '/upstreams/a/headers/X', message: 'bad variable reference ${bad name}: write ${NAME}, ${NAME:-default} or ${NAME:?message}' },
      { path: '/upstreams/a/headers/Y', message: 'unterminated ${ (write $${ for a literal ${)' },
      { path: '/upstreams/a/url', message: 'environment variable URL is not set (write ${URL:-default} for a default)' },
    ],
  );
  // Keys are not expanded; JSON Pointer escapes ~ and /.
  assert.deepEqual(issuesOf({ upstreams: { a: { command: 'x', env: { 'A/B~': '${NOPE}' } } } }), [
    { path: '/upstreams/a/env/A~1B~0', message: 'environment variable NOPE is not set (write ${NOPE:-default} for a default)' },
    { path: '/upstreams/a/env/A~1B~0', message: 'is not a valid name: must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)' },
  ]);
});

test('mcpServers is normalized into upstreams: type/transport mapped, client-only keys dropped, disabled skipped', () => {
  const c = validateConfig(
    {
      mcpServers: {
        fs: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
          env: { A: 'b' },
          type: 'stdio',
          autoApprove: ['read'],
          timeout: 60,
        },
        remote: { type: 'streamable-http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' }, alwaysAllow: [] },
        cline: { transport: 'streamableHttp', url: 'https://c.example.com/mcp', description: 'kept' },
        old: { type: 'sse', url: 'http://127.0.0.1:3001/sse' },
        off: { command: 'nope', disabled: true },
      },
      listen: { port: 0 },
      aggregate: {},
    },
    'test',
    { env: {} },
  );
  const base = { dialects: DIALECTS, limits: DEFAULT_LIMITS, optional: false };
  const http = { headers: {}, era: 'auto', isolation: 'per-session', forwardAuthorization: false };
  assert.deepEqual(c.upstreams, {
    fs: {
      ...base,
      name: 'fs',
      path: '/fs/mcp',
      transport: 'stdio',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
      env: { A: 'b' },
      era: 'auto',
    },
    remote: {
      ...base,
      ...http,
      name: 'remote',
      path: '/remote/mcp',
      transport: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: 'Bearer t' },
    },
    cline: { ...base, ...http, name: 'cline', path: '/cline/mcp', transport: 'http', url: 'https://c.example.com/mcp', description: 'kept' },
    old: {
      ...base,
      ...http,
      name: 'old',
      path: '/old/mcp',
      transport: 'http',
      url: 'http://127.0.0.1:3001/sse',
      era: '2024-11-05',
      // How the era was pinned, in the words written, for advice (docs/upstreams.md, "Which era auto picks").
      sseSetting: { written: 'type: sse', streamable: 'type: http' },
    },
  });
  assert.deepEqual(c.aggregate, { path: '/mcp', upstreams: ['fs', 'remote', 'cline', 'old'], separator: '__' });
  assert.equal(c.listen.port, 0);
});

test('mcpServers: transport words that contradict command/url, era or each other are errors at their own paths', () => {
  assert.deepEqual(
    issuesOf({
      mcpServers: {
        a: { type: 'stdio', url: 'https://e.com/mcp' },
        b: { type: 'http', command: 'x' },
        c: { type: 'sse', url: 'https://e.com/sse', era: '2025-03-26' },
        d: { type: 'http', transport: 'sse', url: 'https://e.com/sse' },
        e: { type: 'websocket', url: 'wss://e.com' },
        f: { command: 'x', disabled: true },
      },
      aggregate: { upstreams: ['f'] },
    }),
    [
      { path: '/aggregate/upstreams/0', message: 'upstream f is disabled' },
      { path: '/mcpServers/a/type', message: '`stdio` needs `command`, not `url`' },
      { path: '/mcpServers/b/type', message: '`http` needs `url`, not `command`' },
      { path: '/mcpServers/c/era', message: '`sse` (HTTP+SSE) is era 2024-11-05; drop `era` or set it to 2024-11-05' },
      { path: '/mcpServers/d/type', message: 'says `http` but `transport` says `sse`' },
      { path: '/mcpServers/e/type', message: 'must be one of: stdio, http, streamable-http, streamableHttp, sse, embedded' },
      { path: '/mcpServers/e/url', message: 'must be an http:// or https:// URL with a host (e.g. https://mcp.example.com/mcp)' },
    ],
  );
  assert.deepEqual(issuesOf({ mcpServers: { a: { command: 'x', disabled: true } } }), [{ path: '/mcpServers', message: 'every upstream is disabled' }]);
  // Neither command nor url: the stdio word asks for `command`, and names no `url` that is not there.
  const bare = issuesOf({ upstreams: { a: { transport: 'stdio' } } }).filter((i) => i.path === '/upstreams/a/transport');
  assert.ok(
    bare.some((i) => i.message === '`stdio` needs `command`'),
    JSON.stringify(bare),
  );
  assert.ok(!bare.some((i) => i.message.includes('not `url`')), JSON.stringify(bare));
});

test('listMounts: listen.path prefix, HTTP+SSE siblings only where served, aggregate last', () => {
  const c = validateConfig(
    {
      listen: { path: '/gw' },
      upstreams: { a: { command: 'x', dialects: { legacySse: true } }, b: { url: 'https://e.com/mcp', path: '/api/v1/mcp' } },
      aggregate: { path: '/all' },
    },
    'test',
    { env: {} },
  );
  assert.deepEqual(
    listMounts(c).map(({ upstream, upstreams, mcpPath, ssePath, messagesPath }) => ({ upstream, upstreams, mcpPath, ssePath, messagesPath })),
    [
      { upstream: 'a', upstreams: ['a'], mcpPath: '/gw/a/mcp', ssePath: '/gw/a/sse', messagesPath: '/gw/a/messages' },
      { upstream: 'b', upstreams: ['b'], mcpPath: '/gw/api/v1/mcp', ssePath: undefined, messagesPath: undefined },
      { upstream: undefined, upstreams: ['a', 'b'], mcpPath: '/gw/all', ssePath: undefined, messagesPath: undefined },
    ],
  );
});

test('YAML and JSON files give the same config; other names are sniffed; a relative cwd resolves against the file', async (t) => {
  const dir = tempDir(t);
  const yaml = 'upstreams:\n  a:\n    command: srv # comment\n    args: [--port, 8080]\n    cwd: work\naggregate: {}\n';
  const json = JSON.stringify({ upstreams: { a: { command: 'srv', args: ['--port', '8080'], cwd: 'work' } }, aggregate: {} });
  const files = { 'c.yaml': yaml, 'c.yml': yaml, 'c.json': json, 'c.conf': json, c: yaml };
  const loaded: FrozenConfig[] = [];
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(path.join(dir, name), text);
    loaded.push(await loadConfig(path.join(dir, name), { env: {} }));
  }
  for (const c of loaded) assert.deepEqual(c, loaded[0]);
  const a = loaded[0].upstreams.a;
  assert.equal(a.transport === 'stdio' && a.cwd, path.join(dir, 'work'));
  // A byte order mark is ignored.
  writeFileSync(path.join(dir, 'bom.json'), '\uFEFF' + json);
  assert.deepEqual(await loadConfig(path.join(dir, 'bom.json'), { env: {} }), loaded[0]);
});

test('unreadable and unparsable files are SWY_ERR_CONFIG_INVALID at path ""', async (t) => {
  const dir = tempDir(t);
  const cases: Array<[string, string | undefined, RegExp]> = [
    ['missing.yaml', undefined, /^cannot read the file: ENOENT$/],
    ['empty.yaml', '  \n', /^the file is empty$/],
    ['dup.yaml', 'upstreams: {}\nupstreams: {}\n', /^not valid YAML: Map keys must be unique at line 2, column 1$/],
    ['bad.yaml', 'upstreams: [\n', /^not valid YAML: /],
    ['alias.yaml', 'upstreams: *nope\n', /^not valid YAML: /],
    ['bad.json', '{"upstreams": {},}', /^not valid JSON: /],
  ];
  for (const [name, text, message] of cases) {
    const file = path.join(dir, name);
    if (text !== undefined) writeFileSync(file, text);
    await assert.rejects(loadConfig(file, { env: {} }), (err: unknown) => {
      assert.ok(err instanceof SwitchyardError, name);
      assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
      const errors = err.data?.errors as ConfigIssue[];
      assert.equal(errors.length, 1, name);
      assert.equal(errors[0].path, '', name);
      assert.match(errors[0].message, message, name);
      assert.ok(err.message.startsWith(`Invalid configuration: ${file}: 1 error: (file): `), err.message);
      return true;
    });
  }
  assert.throws(
    () => parseConfigText('a: 1\n---\nb: 2\n', 'x.yaml'),
    (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID',
  );
});

test('switchyard validate: "ok: N upstreams" on stdout and exit 0, or every failing path on stdout and exit 1', async (t) => {
  const dir = tempDir(t);
  const good = path.join(dir, 'good.yaml');
  const bad = path.join(dir, 'bad.json');
  writeFileSync(good, 'upstreams:\n  a: { command: x }\n  b: { url: "https://e.com/mcp" }\n');
  writeFileSync(bad, JSON.stringify({ listn: 1, upstreams: { a: { url: '${SWY_TEST_UNSET_VAR}' } } }));
  const script = `import { runValidate } from ${JSON.stringify(path.join(REPO_ROOT, 'dist/src/cli/validate.js'))}; process.exitCode = await runValidate(process.argv[1]);`;
  const env = { ...process.env };
  delete env.SWY_TEST_UNSET_VAR;
  const ok = await run(process.execPath, ['--input-type=module', '-e', script, good], { env });
  assert.equal(ok.stdout, 'ok: 2 upstreams\n');
  assert.equal(ok.stderr, '');
  await assert.rejects(run(process.execPath, ['--input-type=module', '-e', script, bad], { env }), (err: { code: number; stdout: string; stderr: string }) => {
    assert.equal(err.code, 1);
    assert.equal(err.stderr, '');
    assert.equal(
      err.stdout,
      `${bad}: invalid config, 2 errors\n` +
        '  /listn: is not a known key (did you mean `listen`?)\n' +
        '  /upstreams/a/url: environment variable SWY_TEST_UNSET_VAR is not set (write ${SWY_TEST_UNSET_VAR:-default} for a default)\n',
    );
    return true;
  });
});
