// Found by a trial (2026-12-04): with `auth` configured, the library's fetch handler skipped it:
// createSwitchyard passed createFetchHandler no `identify`, so a request without a key was
// served (200), where docs/embedding.md says configured authentication decides every request.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { allOn, switchyard } from '../helpers/library.js';
import { CHANNELS } from '../../src/core/diagnostics.js';
import type { RequestStartMessage } from '../../src/core/diagnostics.js';

const KEY = 'fetch-key_0123456789abcdefghijklmnopqrstuv';

test('with auth.apiKeys, sy.fetch refuses a request without a key or with a wrong one (401 with WWW-Authenticate) and serves the key’s principal', async (t) => {
  const sy = switchyard(t, { auth: { apiKeys: [{ name: 'alice', sha256: createHash('sha256').update(KEY).digest('hex') }] } });
  const call = (authorization?: string) =>
    sy.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { ...modernHeaders('tools/call', 'echo'), ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } })),
      }),
    );
  const none = await call();
  assert.equal(none.status, 401);
  assert.match(String(none.headers.get('www-authenticate')), /^Bearer /);
  assert.equal((await call('Bearer wrong-key_0123456789abcdefghijklmnopqrstu')).status, 401);
  const starts = allOn<RequestStartMessage>(t, CHANNELS.requestStart);
  const ok = await call(`Bearer ${KEY}`);
  assert.equal(ok.status, 200);
  const body = (await ok.json()) as { result?: { content?: Array<{ text: string }> }; error?: unknown };
  assert.deepEqual(body.result?.content, [{ type: 'text', text: 'Echo: hi' }]);
  assert.deepEqual(
    starts.map((m) => [m.ctx.identity?.issuer, m.ctx.identity?.subject]),
    [['switchyard:api-key', 'alice']],
  );
});
