// The audit line cut component names at 256 characters but wrote `principal.sub` whole: a valid
// token whose subject is ~15,000 characters (the authorization server's to choose) put all of it
// in every audit line (found by h-trial8). It is now cut the same way (docs/policy.md, "Audit lines").
// The debug line 'authenticated' wrote the subject whole too; it now uses the same cut
// (loggedSubject, src/core/logged-text.ts).

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_LOGGED_NAME_CHARS } from '../../src/core/logged-text.js';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';

/**
 * A gateway behind a real RFC 7662 introspection endpoint on 127.0.0.1 that calls every token
 * active for a 15,000-character `sub`, after one tools/call with an opaque token; its log records
 * (debug and up) and the issuer.
 */
async function callWithLongSubject(t: TestContext): Promise<{ records: Array<Record<string, unknown>>; issuer: string; url: string }> {
  const sub = 's'.repeat(15_000);
  let audience = '';
  const as = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ active: true, sub, aud: audience, exp: Math.floor(Date.now() / 1000) + 300 }));
    });
  });
  await new Promise<void>((resolve) => as.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => as.close(() => resolve())));
  const issuer = `http://127.0.0.1:${(as.address() as AddressInfo).port}`;
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer, introspection: { endpoint: `${issuer}/introspect`, clientId: 'rs', clientSecret: 'secret' } } },
    policy: { default: 'allow' },
    upstreams: { demo: { transport: 'embedded' } },
  });
  audience = gw.urls[0];
  const r = await modernCall(gw.urls[0], 1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }, 'Bearer opaque-token-0123456789');
  assert.equal(r.status, 200);
  assert.ok((r.json as { result?: unknown }).result, r.text);
  return { records: gw.records, issuer, url: gw.urls[0] };
}

test('a 15,000-character principal.sub is cut to 256 characters and an ellipsis in the audit line', async (t) => {
  const { records, issuer } = await callWithLongSubject(t);
  const lines = records.filter((x) => x.msg === 'policy decision');
  assert.equal(lines.length, 1);
  assert.equal(MAX_LOGGED_NAME_CHARS, 256);
  assert.deepEqual(lines[0].principal, { sub: `${'s'.repeat(256)}…`, iss: issuer });
});

test("the debug line 'authenticated' cuts the same 15,000-character subject as the audit line does", async (t) => {
  const { records, issuer, url } = await callWithLongSubject(t);
  const lines = records.filter((x) => x.msg === 'authenticated');
  assert.equal(lines.length, 1);
  const { level, component, ...fields } = lines[0];
  assert.deepEqual([level, component], [20, 'auth']);
  assert.deepEqual(fields, {
    issuer,
    subject: `${'s'.repeat(256)}…`,
    source: 'introspection',
    resource: url,
    msg: 'authenticated',
  });
});
