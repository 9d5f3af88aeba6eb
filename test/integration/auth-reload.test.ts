// A config reload (src/runtime.ts) rebuilds mounts: the ones it adds get the front door's
// authentication and their upstream's policy at once, and a reload may not open a mount on a
// network address any more than a start may.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { validateConfig } from '../../src/config/load.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';

const KEY = 'reload-key_0123456789abcdefghijklmnopqrst';
const API_KEYS = [{ name: 'ci-bot', sha256: createHash('sha256').update(KEY).digest('hex'), scopes: ['mcp'] }];

/** GET of an RFC 9728 metadata URL: its status and, when 200, the document's `resource`. */
async function metadata(url: string): Promise<[number, unknown]> {
  const res = await fetch(url);
  return [res.status, res.status === 200 ? ((await res.json()) as { resource: unknown }).resource : undefined];
}

test('a mount a reload adds is authenticated, described (RFC 9728) and under its policy at once; a removed one is gone', async (t) => {
  const raw = { auth: { apiKeys: API_KEYS }, upstreams: { a: { transport: 'embedded' } } };
  const gw = await gatewayFromConfig(t, raw);
  const [a] = gw.urls;
  const b = a.replace('/a/mcp', '/b/mcp');
  assert.equal((await modernCall(b, 1, 'tools/list', {}, `Bearer ${KEY}`)).status, 404);
  const origin = new URL(a).origin;
  const wellKnown = `${origin}/.well-known/oauth-protected-resource`;
  assert.deepEqual(await metadata(`${wellKnown}/a/mcp`), [200, a]);
  assert.deepEqual(await metadata(wellKnown), [200, a]);
  assert.deepEqual(await metadata(`${wellKnown}/b/mcp`), [404, undefined]);

  const next = {
    ...raw,
    listen: { host: '127.0.0.1', port: 0 },
    upstreams: {
      b: {
        transport: 'embedded',
        policy: { default: 'allow', rules: [{ name: 'no-add', effect: 'deny', when: "component.kind == 'tool' && component.name == 'add'" }] },
      },
    },
  };
  const report = await gw.reload(validateConfig(next, 'test', { env: {} }));
  assert.deepEqual([report.added, report.removed], [['b'], ['a']]);

  const anonymous = await modernCall(b, 2, 'tools/list', {});
  assert.equal(anonymous.status, 401);
  assert.match(String(anonymous.headers['www-authenticate']), /^Bearer resource_metadata=/);
  // The challenge's metadata URL answers for the new mount (it once 404ed until a restart); the removed mount's is gone.
  const prm = /resource_metadata="([^"]+)"/.exec(String(anonymous.headers['www-authenticate']))?.[1];
  assert.equal(prm, `${wellKnown}/b/mcp`);
  assert.deepEqual(await metadata(prm), [200, b]);
  assert.deepEqual(await metadata(wellKnown), [200, b]);
  assert.deepEqual(await metadata(`${wellKnown}/a/mcp`), [404, undefined]);
  assert.equal((await modernCall(b, 3, 'tools/list', {}, 'Bearer not-the-key')).status, 401);
  const listed = await modernCall(b, 4, 'tools/list', {}, `Bearer ${KEY}`);
  assert.equal(listed.status, 200);
  const names = (listed.json as { result: { tools: Array<{ name: string }> } }).result.tools.map((x) => x.name);
  assert.ok(names.includes('echo') && !names.includes('add'), names.join());
  const denied = await modernCall(b, 5, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } }, `Bearer ${KEY}`);
  assert.equal(denied.status, 200);
  assert.deepEqual((denied.json as { error: unknown }).error, { code: -32010, message: 'Forbidden by policy: tool add', data: { kind: 'tool', name: 'add' } });
  assert.equal((await modernCall(a, 6, 'tools/list', {}, `Bearer ${KEY}`)).status, 404);
});

test('on a non-loopback listener a reload that would add a mount without auth is refused, and nothing changes', async (t) => {
  const raw = { listen: { host: '0.0.0.0', port: 0 }, upstreams: { a: { transport: 'embedded', auth: { apiKeys: API_KEYS } } } };
  const gw = await gatewayFromConfig(t, raw);
  const next = validateConfig({ ...raw, upstreams: { ...raw.upstreams, b: { transport: 'embedded' } } }, 'test', { env: {} });
  await assert.rejects(gw.reload(next), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_AUTH_OPEN_LISTENER');
  assert.deepEqual(
    gw.mounts.map((m) => m.name),
    ['a'],
  );
});

test('a reload that brings API keys to a gateway that started without any auth is refused (a restart applies it)', async (t) => {
  const raw = { upstreams: { a: { transport: 'embedded' } } };
  const gw = await gatewayFromConfig(t, raw);
  const next = validateConfig({ ...raw, upstreams: { ...raw.upstreams, b: { transport: 'embedded', auth: { apiKeys: API_KEYS } } } }, 'test', {
    env: {},
  });
  await assert.rejects(
    gw.reload(next),
    (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID' && err.message.includes('after a restart'),
  );
  assert.deepEqual(
    gw.mounts.map((m) => m.name),
    ['a'],
  );
});
