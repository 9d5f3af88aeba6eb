// Where authentication is required, and who the stdio client is: an open gateway on a
// non-loopback address refuses to start (one line), loopback without config is open, the
// `--serve-stdio` client is the configured local principal; and the new config keys validate.
// See 2025-11-25 basic/transports#security-warning; basic/authorization (stdio: credentials from the environment).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { checkOpenListener } from '../../src/auth/open-listener.js';
import { localIdentity } from '../../src/auth/stdio-identity.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { isLoopbackHost } from '../../src/core/loopback.js';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const BIN = path.join(REPO_ROOT, 'dist/src/cli/main.js');

function tempFile(t: { after(fn: () => void): void }, name: string, text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-identity-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

test('loopback hosts are told from the others', () => {
  for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]', '::ffff:127.0.0.1']) assert.equal(isLoopbackHost(h), true, h);
  for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'gw.example.com', '128.0.0.1', '127.0.0.256', '::ffff:10.0.0.1', 'localhost.example'])
    assert.equal(isLoopbackHost(h), false, h);
});

test('an open gateway on a non-loopback address is refused, naming the mounts without auth; auth, none: true or the flag let it start', () => {
  const open = { name: 'ev', path: '/ev/mcp', auth: undefined };
  const stdioOnly = { name: 'st', path: '/st/mcp', auth: { stdio: { subject: 'me' } } };
  assert.throws(
    () => checkOpenListener('0.0.0.0', [open, stdioOnly, { name: 'ok', path: '/ok/mcp', auth: { apiKeys: [{ name: 'k', sha256: 'a'.repeat(64) }] } }], false),
    (err: unknown) =>
      err instanceof SwitchyardError &&
      err.code === 'SWY_ERR_AUTH_OPEN_LISTENER' &&
      err.message ===
        'Refusing to serve without authentication on a non-loopback address: 0.0.0.0: /ev/mcp, /st/mcp have no `auth`; configure `auth` (or `auth: { none: true }` to mean it), or pass --allow-unauthenticated',
  );
  checkOpenListener('0.0.0.0', [{ ...open, auth: { none: true } }], false);
  checkOpenListener('0.0.0.0', [open], true);
  checkOpenListener('127.0.0.1', [open], false);
});

test('startGatewayFromConfig refuses before any upstream starts; the CLI says why in one line and exits 1', async () => {
  const config = validateConfig({ listen: { host: '0.0.0.0', port: 0 }, upstreams: { demo: { transport: 'embedded' } } }, 'test', { env: {} });
  await assert.rejects(startGatewayFromConfig(config, pino({ level: 'silent' })), { code: 'SWY_ERR_AUTH_OPEN_LISTENER' });

  const r = spawnSync(process.execPath, [BIN, '--host', '0.0.0.0', '--port', '0'], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1);
  assert.equal(
    r.stderr
      .split('\n')
      .filter((l) => l.startsWith('switchyard:'))
      .join('\n'),
    'switchyard: SWY_ERR_AUTH_OPEN_LISTENER: Refusing to serve without authentication on a non-loopback address: 0.0.0.0: /mcp has no `auth`; configure `auth` (or `auth: { none: true }` to mean it), or pass --allow-unauthenticated',
  );
  assert.equal(r.stdout, '');
  // The flag is part of the command line's help.
  assert.match(spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' }).stdout, /--allow-unauthenticated/);
});

test('the stdio identity: auth.stdio names the principal, else the operating system user', () => {
  assert.deepEqual(localIdentity({ subject: 'ci', scopes: ['mcp:read'], claims: { groups: ['eng'] } }, {}), {
    issuer: 'switchyard:local',
    subject: 'ci',
    scopes: ['mcp:read'],
    claims: { groups: ['eng'] },
    source: 'local',
  });
  assert.equal(localIdentity(undefined, { USER: 'ada' }).subject, 'ada');
  assert.equal(localIdentity(undefined, { LOGNAME: 'alan' }).subject, 'alan');
  assert.equal(localIdentity(undefined, {}).subject, 'local');
});

for (const [who, env, allowed] of [
  ['auth.stdio says bob', { USER: 'alice' }, false],
  ['the OS user is alice', { USER: 'alice' }, true],
] as const) {
  test(`over --serve-stdio policy decides for the local principal (${who})`, async (t) => {
    const stdio = who.startsWith('auth.stdio') ? 'auth: { stdio: { subject: bob } }\n' : '';
    const file = tempFile(
      t,
      'stdio.yaml',
      `${stdio}policy:\n  default: allow\n  rules:\n    - { name: no-add-for-bob, effect: deny, when: "principal.sub == 'bob' && component.name == 'add'" }\nupstreams:\n  demo: { transport: embedded }\n`,
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--serve-stdio', '--config', file, '--log-level', 'silent'],
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    const client = new Client({ name: 'stdio-identity', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    t.after(() => client.close());
    const call = client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
    if (allowed) assert.deepEqual((await call).content, [{ type: 'text', text: '3' }]);
    else await assert.rejects(call, { code: -32010, message: 'MCP error -32010: Forbidden by policy: tool add' });
  });
}

test('config: the identity keys validate at the top level and per mount; conflicts are listed with their paths', () => {
  const ok = validateConfig(
    {
      auth: { bearer: { issuer: 'https://as.example' }, stdio: { subject: 'me' } },
      policy: { default: 'allow' },
      rateLimits: [{ name: 'all', per: 'principal', ratePerSec: 5, burst: 10 }],
      upstreams: {
        gh: {
          url: 'https://up.example/mcp',
          credentials: { clientCredentials: { tokenUrl: 'https://as.example/token', clientId: 'c', clientSecret: 's', resource: 'https://up.example/mcp' } },
          auth: { apiKeys: [{ name: 'ci', sha256: 'b'.repeat(64) }] },
          policy: { default: 'deny' },
          rateLimits: [],
          tools: { include: ['search_*'], rename: { search_code: 'code_search' } },
          prompts: { exclude: ['internal-*'] },
          resources: { include: ['repo://**'] },
          validateArguments: false,
        },
      },
    },
    'test',
    { env: {} },
  );
  assert.deepEqual(ok.policy, { default: 'allow', hideDenied: false, rules: [] });
  assert.equal(ok.upstreams.gh.validateArguments, false);
  assert.deepEqual(ok.upstreams.gh.tools, { include: ['search_*'], rename: { search_code: 'code_search' } });
  assert.equal(ok.upstreams.gh.transport === 'http' && 'clientCredentials' in ok.upstreams.gh.credentials!, true);

  assert.throws(
    () =>
      validateConfig(
        {
          auth: { none: true, apiKeys: [{ name: 'k', sha256: 'a'.repeat(64) }] },
          upstreams: {
            st: { command: 'x', credentials: { headers: { 'X-Key': 'v' } } },
            emb: { transport: 'embedded', credentials: { headers: { 'X-Key': 'v' } }, auth: { none: true } },
            web: { url: 'https://up.example/mcp', forwardAuthorization: true, credentials: { headers: { 'X-Key': 'v' } }, policy: { default: 'maybe' } },
          },
          aggregate: { upstreams: ['emb'] },
        },
        'test',
        { env: {} },
      ),
    {
      code: 'SWY_ERR_CONFIG_INVALID',
      message:
        'Invalid configuration: test: 6 errors: /auth/apiKeys: `none: true` excludes `bearer` and `apiKeys`; /upstreams/emb/auth: cannot be set on an upstream of the aggregate mount (it uses the top-level `auth`); move it to the top level; /upstreams/emb/credentials: is for HTTP upstreams (ones with `url`); /upstreams/st/credentials: is not allowed on a stdio upstream (one with `command`); /upstreams/web/credentials: conflicts with `forwardAuthorization: true`; use one; /upstreams/web/policy/default: must be one of: allow, deny',
    },
  );
});

test('switchyard validate compiles the policy rules and lists every failing path', (t) => {
  const file = tempFile(
    t,
    'bad.yaml',
    'policy:\n  default: deny\n  rules:\n    - { name: a, effect: allow, when: "principal.subject == 1" }\n    - { name: a, effect: deny, when: "true &&" }\nupstreams:\n  demo: { transport: embedded }\n',
  );
  const r = spawnSync(process.execPath, [BIN, 'validate', file], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1);
  assert.equal(r.stdout.split('\n')[0], `${file}: invalid config, 3 errors`);
  assert.deepEqual(
    r.stdout
      .split('\n')
      .slice(1)
      .filter((l) => l)
      .map((l) => l.split(':')[0].trim()),
    ['/policy/rules/0/when', '/policy/rules/1/name', '/policy/rules/1/when'],
  );
});

test('the one pino factory redacts Authorization wherever a request context puts it', () => {
  const logger = path.join(REPO_ROOT, 'dist/src/log/logger.js');
  const script = `import(${JSON.stringify(logger)}).then(({ createLogger }) => { const l = createLogger('info'); l.info({ authorization: 'Bearer t1', ctx: { authorization: 'Bearer t2', method: 'tools/call' }, err: { ctx: { authorization: 'Bearer t3' } }, headers: { authorization: 'Bearer t4' } }, 'x'); l.flush(); })`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
  const { time: _t, pid: _p, hostname: _h, ...line } = JSON.parse(r.stderr) as Record<string, unknown>;
  assert.deepEqual(line, {
    level: 30,
    name: 'switchyard',
    authorization: '[redacted]',
    ctx: { authorization: '[redacted]', method: 'tools/call' },
    err: { ctx: { authorization: '[redacted]' } },
    headers: { authorization: '[redacted]' },
    msg: 'x',
  });
});

// Found by h-mutants: the test above names only Authorization, so dropping any other redacted
// path (a session id, a cookie, a token, a held call's requestState) left every test green.
test('the one pino factory redacts cookies, the session id, tokens and requestState too, and keeps the rest', () => {
  const logger = path.join(REPO_ROOT, 'dist/src/log/logger.js');
  const record = {
    headers: { cookie: 'sid=c1', 'mcp-session-id': 's1', accept: 'application/json' },
    req: { headers: { cookie: 'sid=c2', authorization: 'Bearer t5', host: 'h' } },
    params: { token: 'tk1', requestState: 'rs1', name: 'echo' },
  };
  const script = `import(${JSON.stringify(logger)}).then(({ createLogger }) => { const l = createLogger('info'); l.info(${JSON.stringify(record)}, 'x'); l.flush(); })`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
  const { time: _t, pid: _p, hostname: _h, ...line } = JSON.parse(r.stderr) as Record<string, unknown>;
  assert.deepEqual(line, {
    level: 30,
    name: 'switchyard',
    headers: { cookie: '[redacted]', 'mcp-session-id': '[redacted]', accept: 'application/json' },
    req: { headers: { cookie: '[redacted]', authorization: '[redacted]', host: 'h' } },
    params: { token: '[redacted]', requestState: '[redacted]', name: 'echo' },
    msg: 'x',
  });
});
