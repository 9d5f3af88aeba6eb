// Regression (found by a trial, h-trial6): the era probe read every 403 as an authentication
// refusal asking for credentials. A server that refuses a request for another reason (an Origin
// or Host allowlist, a firewall: 403 with no WWW-Authenticate challenge) made `switchyard probe`
// say `HTTP 403: the server wants credentials (pass --header Authorization:…)`, and a gateway
// fronting it mark the upstream down with `the server wants credentials (give the upstream one in
// its config: credentials…)`, while the server's own answer said `Forbidden: Origin not allowed`.
// Such a 403 is still no era evidence; its reason now says the server refused the request without
// asking for credentials, and quotes the server's words to the operator (never in clientReason).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CLI } from '../helpers/cli.js';
import { gatewayFromConfig } from '../helpers/identity.js';

async function probeCli(url: string, ...args: string[]): Promise<{ code: number; stdout: string }> {
  return promisify(execFile)(process.execPath, [CLI, 'probe', ...args, url], { encoding: 'utf8' }).then(
    (x) => ({ code: 0, stdout: x.stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
}

const FORBIDDEN = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: Origin not allowed' } });
const REASON = 'HTTP 403: the server refused the request without asking for credentials (no WWW-Authenticate challenge)';

test('probe of a server that refuses the Origin (403, no challenge): the verdict quotes its reason, and does not ask for credentials', async (t) => {
  const gw = await gatewayFromConfig(t, { upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  assert.deepEqual(await probeCli(url, '--header', 'Origin: http://evil.example'), {
    code: 1,
    stdout:
      `1. POST /demo/mcp server/discover\n   → HTTP 403  ${FORBIDDEN}\n   forbidden, no authentication challenge: not era evidence\n` +
      `verdict: no era found: ${REASON}: "Forbidden: Origin not allowed"\n`,
  });
  const json = JSON.parse((await probeCli(url, '--json', '--header', 'Origin: http://evil.example')).stdout) as Record<string, unknown>;
  assert.equal(json.reason, `${REASON}: "Forbidden: Origin not allowed"`);
  assert.equal(json.clientReason, REASON);
});

test("a gateway whose HTTP upstream refuses its Origin: the upstream's lastError says so, not that it wants credentials", async (t) => {
  const inner = await gatewayFromConfig(t, { upstreams: { demo: { transport: 'embedded' } } });
  const origin = new URL(inner.urls[0]).origin;
  const gw = await gatewayFromConfig(t, {
    admin: false,
    // One attempt while the test looks: the next is a minute away.
    limits: { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 },
    upstreams: { fenced: { url: inner.urls[0], headers: { Origin: 'http://evil.example' } } },
  });
  assert.equal(gw.supervised.get('fenced')?.state, 'down');
  assert.equal(gw.supervised.get('fenced')?.lastError, `Upstream unavailable: ${origin}: ${REASON}: "Forbidden: Origin not allowed"`);
});
