// Regression (found by a trial, h-trial6): a config reload that removes (or replaces) an upstream
// drains its mount's calls for `shutdownGraceMs`, then cuts those still running. They were cut
// with the shutdown's error, `Server is shutting down: request aborted`
// (SWY_ERR_ADMISSION_SHUTTING_DOWN, whose advice is "retry on another instance"), logged as such,
// while the gateway went on serving every other mount. The cut now says what happened:
// -32000 `Upstream unavailable: mount NAME was removed or replaced by a config reload; request
// aborted` (SWY_ERR_UPSTREAM_UNAVAILABLE).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli } from '../helpers/cli.js';
import { messagesUntilResponse, modernBody, modernHeaders, openHttpSseSession, post, send } from '../helpers/http.js';

const BOTH = [
  'dialects: { legacySse: true }',
  'limits: { shutdownGraceMs: 300 }',
  'upstreams:',
  '  a: { transport: embedded }',
  '  b: { transport: embedded }',
];
const CUT = 'Upstream unavailable: mount b was removed or replaced by a config reload; request aborted';

test("a reload that removes an upstream cuts its running calls with the mount's reason, not the shutdown's (2026-07-28 and HTTP+SSE)", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-reload-cut-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'gw.yaml');
  writeFileSync(file, BOTH.join('\n'));
  const gw = await startCli(t, ['--config', file, '--no-admin']);

  const session = await openHttpSseSession(t, `${gw.origin}/b`);
  const slow = { name: 'slow', arguments: { steps: 50, stepMs: 200 } };
  assert.equal(
    (await send(session.to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: slow }), { 'content-type': 'application/json' }))
      .status,
    202,
  );
  const modern = post(`${gw.origin}/b/mcp`, modernBody(7, 'tools/call', slow), modernHeaders('tools/call', 'slow'));
  await new Promise((r) => setTimeout(r, 300));

  writeFileSync(file, BOTH.slice(0, -1).join('\n'));
  gw.child.kill('SIGHUP');

  const legacy = await messagesUntilResponse(session.sse, 2);
  assert.deepEqual(legacy.at(-1), { jsonrpc: '2.0', id: 2, error: { code: -32000, message: CUT } });
  const m = await modern;
  assert.equal(m.status, 200);
  assert.deepEqual(m.json, { jsonrpc: '2.0', id: 7, error: { code: -32000, message: CUT } });

  // The gateway itself still serves, and never said it was shutting down.
  const a = await post(`${gw.origin}/a/mcp`, modernBody(8, 'tools/call', { name: 'echo', arguments: { message: 'on' } }), modernHeaders('tools/call', 'echo'));
  assert.equal((a.json as { result: { content: Array<{ text: string }> } }).result.content[0].text, 'Echo: on');
  const failed = gw.records().filter((r) => r.msg === 'request failed' && r.mount === 'b');
  assert.deepEqual(
    failed.map((r) => [r.code, r.error]),
    [
      ['SWY_ERR_UPSTREAM_UNAVAILABLE', CUT],
      ['SWY_ERR_UPSTREAM_UNAVAILABLE', CUT],
    ],
  );
  assert.ok(!gw.records().some((r) => r.code === 'SWY_ERR_ADMISSION_SHUTTING_DOWN'));
});
