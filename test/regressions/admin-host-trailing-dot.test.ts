// Regression (found by a tester): the admin listener refused `Host: localhost.` with 403
// SWY_ERR_ADMIN_HOST_FORBIDDEN, though docs/config.md treats `localhost.` as loopback (RFC 6761
// §6.3; RFC 1034 §3.1: the trailing dot names the same, absolute, name) and the MCP listener
// serves it. It kept its own list of three exact names; it now asks the shared rule,
// isLoopbackHost (src/core/loopback.ts), so every loopback name passes and others still do not.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCli } from '../helpers/cli.js';
import { send } from '../helpers/http.js';

test('the admin listener on 127.0.0.1 serves Host localhost. (any case, with or without port) and other loopback names; foreign names stay 403', async (t) => {
  const gw = await startCli(t, []);
  const adminUrl =
    /admin listener on (http:\/\/\S+)/.exec(gw.stderr())?.[1] ??
    (await new Promise<string>((resolve) => {
      gw.child.stderr!.on('data', () => {
        const m = /admin listener on (http:\/\/\S+)/.exec(gw.stderr());
        if (m) resolve(m[1]);
      });
    }));
  const port = new URL(adminUrl).port;
  const healthz = async (host: string) => {
    const r = await send(`${adminUrl}healthz`, 'GET', undefined, { host });
    return [r.status, r.json];
  };
  const OK = [200, { status: 'ok' }];
  const FORBIDDEN = [403, { error: { code: 'SWY_ERR_ADMIN_HOST_FORBIDDEN', message: 'Forbidden: Host not allowed on the admin listener' } }];
  for (const host of [
    'localhost.',
    `localhost.:${port}`,
    `LOCALHOST.:${port}`,
    `localhost:${port}`,
    `127.0.0.1:${port}`,
    `[::1]:${port}`,
    `[0:0::1]:${port}`,
    `127.0.0.2:${port}`,
  ])
    assert.deepEqual(await healthz(host), OK, host);
  for (const host of ['evil.example', `evil.example.:${port}`, `localhost.evil.example:${port}`, `localhost..:${port}`, `127.0.0.1.nip.io:${port}`])
    assert.deepEqual(await healthz(host), FORBIDDEN, host);
});
