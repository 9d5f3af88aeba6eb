// The library's fetch handler captured no credential for the streams it opened, so with configured
// authentication they were never checked with the front door again: a listen opened with a JWT
// through `sy.fetch` ended at the token's exp exactly, ignoring `clockToleranceSec` (a client that
// reconnected within the tolerance with the same token was cut again at once), where the same
// listen on the standalone listener, the plugin or `handle` stays open while the front door still
// accepts the token. `sy.fetch` now captures the `Authorization` and the base URL of the resource
// URI as the front door saw them (docs/embedding.md; docs/security.md, "Revoking a key").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthServer } from '../fixtures/auth-server.js';
import { forge } from '../helpers/oauth.js';
import { modernRequest, switchyard } from '../helpers/library.js';

/** A web SSE body read as it comes: the text so far, and when it ended. */
function readBody(body: ReadableStream<Uint8Array>): { text(): string; ended: Promise<void> } {
  let text = '';
  const decoder = new TextDecoder();
  const reader = body.getReader();
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      text += decoder.decode(value, { stream: true });
    }
  })();
  return { text: () => text, ended };
}

/** Resolves true once `ended` settled, false when it has not after `ms`. */
const endsWithin = (ended: Promise<void>, ms: number) =>
  Promise.race([ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);

test('a listen opened through sy.fetch with a JWT stays open past exp within clockToleranceSec, and ends once the front door refuses the token', async (t) => {
  const as = await startAuthServer(t);
  const sy = switchyard(t, { auth: { bearer: { issuer: as.issuer, clockToleranceSec: 2 } } });
  const url = 'http://127.0.0.1/mcp';
  const now = Math.floor(Date.now() / 1000);
  const authorization = `Bearer ${await forge(as.privateJwk, { iss: as.issuer, sub: 'short', aud: url, iat: now, exp: now + 2 })}`;
  const res = await sy.fetch(modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } }, { id: 7, headers: { authorization } }));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const body = readBody(res.body!);
  t.after(() => void res.body?.cancel().catch(() => {}));
  // Past exp, within the tolerance: a request with the token passes, and the listen is open.
  await new Promise((resolve) => setTimeout(resolve, (now + 2) * 1000 - Date.now() + 500));
  assert.match(body.text(), /notifications\/subscriptions\/acknowledged/);
  assert.equal((await sy.fetch(modernRequest('tools/list', {}, { headers: { authorization } }))).status, 200);
  assert.equal(await endsWithin(body.ended, 0), false, 'open within the tolerance');
  // Refused from exp + 2 s on; checked again every EXPIRED_RECHECK_MS (5 s).
  assert.equal(await endsWithin(body.ended, 20_000), true, 'ended once refused');
  assert.ok(Date.now() >= (now + 4) * 1000, 'not before exp + the tolerance');
  assert.match(body.text(), /"id":7,"error":\{"code":-32000,"message":"Unauthorized: invalid access token: [^"]*expired[^"]*"\}/);
  const lines = sy.records.filter((r) => r.msg === 'open stream ended: its credential no longer passes');
  assert.deepEqual(
    lines.map((r) => [r.kind, r.cause, r.code, (r.principal as { sub: string }).sub]),
    [['listen', 'expired', 'SWY_ERR_AUTH_INVALID_TOKEN', 'short']],
  );
  assert.equal(JSON.stringify(lines).includes(authorization.slice(7)), false);
});
