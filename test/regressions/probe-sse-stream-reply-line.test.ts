// A new-user trial of `switchyard probe` against an HTTP+SSE server: the initialize step printed
// `→ HTTP 202  {"jsonrpc":"2.0","id":…,"result":…}`, the reply read from the stream beside the
// POST's 202 as if it were the 202's body (which is empty). The step now shows the 202 alone and,
// on its own labelled line, the reply read from the stream; a reply the server put in the POST's
// own answer (tolerated, warned about) stays beside that answer's status.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { CLI } from '../helpers/cli.js';
import { probeSseStub } from '../helpers/stub-http.js';

const eras = await eraClients();
const RESULT = { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'legacy', version: '1.0.0' } };

/** The first three steps every HTTP+SSE stub here gets: both POSTs on /mcp refused 405, then the stream. */
const HEAD =
  '1. POST /mcp server/discover\n   → HTTP 405\n   HTTP 405 without a modern error body: try initialize\n' +
  '2. POST /mcp initialize\n   → HTTP 405\n   HTTP 405: fall back to HTTP+SSE (GET, expect an endpoint event)\n' +
  '3. GET /mcp (Accept: text/event-stream)\n   → HTTP 200  event: endpoint, data: /messages?sessionId=s\n   an endpoint event: HTTP+SSE, POST to /messages?sessionId=s\n';

test('switchyard probe: the initialize step shows the POST’s 202, and the stream’s reply on its own line', async (t) => {
  const { url } = await probeSseStub(t, (m) => (m?.method === 'initialize' ? { jsonrpc: '2.0', id: m.id, result: RESULT } : undefined));
  const { port } = new URL(url);
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'probe', url], { encoding: 'utf8' });
  const reply = JSON.stringify({ jsonrpc: '2.0', id: 'switchyard-probe-3', result: RESULT });
  assert.equal(
    stdout,
    HEAD +
      '4. POST /messages initialize\n   → HTTP 202\n' +
      `   reply on the stream: ${reply}\n` +
      '   reply read from the stream\n' +
      `verdict: 2024-11-05 over http+sse (endpoint http://127.0.0.1:${port}/messages?sessionId=s)\n` +
      'server: legacy 1.0.0\ncapabilities: tools\n',
  );
  // The verdict object keeps them apart too: no excerpt for the 202, the reply as streamReply.
  const v = await probeUrl(url, eras, { timeoutMs: 2000 });
  const last = v.steps[v.steps.length - 1];
  assert.deepEqual([last.status, last.excerpt, last.streamReply], [202, undefined, reply]);
});

test('a reply in the POST’s own answer stays beside that answer’s status, with no stream line', async (t) => {
  const s = await probeSseStub(t, (m) => ({ jsonrpc: '2.0', id: m?.id, result: RESULT }), { inPost: true });
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'probe', s.url], { encoding: 'utf8' });
  const reply = JSON.stringify({ jsonrpc: '2.0', id: 'switchyard-probe-3', result: RESULT });
  const step = stdout.slice(stdout.indexOf('4. '), stdout.indexOf('verdict: '));
  assert.equal(
    step,
    `4. POST /messages initialize\n   → HTTP 200  ${reply}\n   reply read from the POST's answer (HTTP 200), not from the stream (tolerated)\n`,
  );
});
