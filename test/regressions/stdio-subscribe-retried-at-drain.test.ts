// Found rereading the subscription sync (2026-12-08): a stdio child's `resources/subscribe`
// refused because the child had not read `maxUpstreamMessageBytes` of its stdin
// (SWY_ERR_UPSTREAM_OVERLOADED, before a byte was written) was deferred, and went again only when
// a client's call on the child ended or some URI's want changed: a quiet gateway kept the URI
// unsubscribed for as long as no call ended, though the child had read its backlog long before.
// The deferred changes now go again when the child's stdin drains within its bound.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { answerMessages, initSession, listenResources, nextSseMessage, post, type RawResponse } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';

// Answers resources/subscribe and then says notifications/resources/updated for its URI; tools
// `pause` (stops reading stdin until SIGUSR2), `hold` (answered at `release`) and `release`.
const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/subscribe-echo-server.mjs');

const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
/** The text of the first content item of a tools/call's answer. */
const text = (r: RawResponse) => (answerMessages(r)[0] as { result?: { content?: Array<{ text?: string }> } }).result?.content?.[0]?.text;

test('a subscribe refused for the child’s stdin backlog is sent once the child has read it, with no call ending meanwhile', async (t) => {
  const gw = await configGateway(t, {
    admin: false,
    upstreams: { kid: { command: process.execPath, args: [FIXTURE], limits: { maxUpstreamMessageBytes: 64 * 1024 } } },
  });
  const url = gw.mounts.find((m) => m.name === 'kid')!.url;
  const h = { ...(await initSession(url, '2025-11-25')), 'mcp-protocol-version': '2025-11-25' };

  // The child stops reading; a call of 600 KiB then fills the pipe, the child's read buffer and
  // the gateway's writer past the bound. That call stays unanswered until `release`, so no call
  // ends until the test says so.
  const pid = Number(text(await post(url, call(1, 'pause'), h)));
  assert.ok(Number.isInteger(pid) && pid > 0);
  let holdEnded = false;
  const hold = post(url, call(2, 'hold', { pad: 'x'.repeat(600 * 1024) }), h).finally(() => (holdEnded = true));
  await new Promise((r) => setTimeout(r, 200));

  // The listen's subscribe is refused unsent, for the backlog.
  const listen = await listenResources(t, url, ['demo://late/1']);
  for (let i = 0; i < 100 && !gw.records.some((l) => l.msg === 'upstream subscription deferred'); i++) await new Promise((r) => setTimeout(r, 20));
  const deferred = gw.records.filter((l) => l.msg === 'upstream subscription deferred' || l.msg === 'upstream subscription failed');
  assert.equal(deferred.length, 1, JSON.stringify(deferred));
  assert.deepEqual([deferred[0].level, deferred[0].uri], [20, 'demo://late/1']);
  assert.match(String(deferred[0].err), /^Upstream overloaded: the child has not read \d+ bytes written to its stdin$/);

  // The child reads again: its stdin drains, and the subscribe is sent; its update reaches the listener.
  process.kill(pid, 'SIGUSR2');
  const note = await nextSseMessage(listen);
  assert.deepEqual(
    [note.method, note.params],
    ['notifications/resources/updated', { uri: 'demo://late/1', _meta: { 'io.modelcontextprotocol/subscriptionId': 'L1' } }],
  );
  // No call had ended: the held one is still waiting.
  assert.equal(holdEnded, false);
  assert.equal(text(await post(url, call(3, 'release'), h)), 'released');
  assert.equal(text(await hold), 'held');
});
