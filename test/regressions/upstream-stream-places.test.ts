// Regression (found by an operator trial, helper h-t2, 2026-12-05): under `isolation: per-session`
// every upstream session of an HTTP upstream keeps a long-lived stream open (a 2025 GET stream, an
// HTTP+SSE session's stream), and each holds one of the upstream Agent's `maxUpstreamConnections`
// for its life. Once the streams held them all, every call's POST waited for a connection that
// never freed: with about 510 live sessions (the default 512), every call to that upstream hung
// until `requestTimeoutMs`, stateless 2026-07-28 calls and new sessions included. Here
// `maxUpstreamConnections: 4`: sessions 3 to 6 and a stateless call timed out.
// Now the streams take at most the connections less 1/`streamReserveDivisor` of them (at least
// one kept for calls): a 2025 session past that goes on without its GET stream until a place
// frees (said once at warn), and an HTTP+SSE session past it is refused, retryably.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { recordingLog } from '../helpers/redis.js';
import { initSession, modernBody, modernHeaders, post } from '../helpers/http.js';
import { everythingHttp } from '../helpers/servers.js';

async function gatewayFor(t: { after(fn: () => Promise<void>): void }, url: string) {
  const { log, records } = recordingLog();
  const config = validateConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      dialects: { modern: true, streamable: true },
      upstreams: { ev: { url, limits: { maxUpstreamConnections: 4, requestTimeoutMs: 5_000 } } },
    },
    'test',
    { expandEnv: false },
  );
  const gw = await startGatewayFromConfig(config, log);
  t.after(() => gw.close());
  return { url: gw.url, records };
}

const echo = (message: string) => ({ name: 'echo', arguments: { message } });
const textOf = (json: unknown) => (json as { result?: { content?: Array<{ text?: string }> } }).result?.content?.[0]?.text;

test(
  '2025 upstream, 4 connections: six client sessions and a stateless call are all answered; the streams past their places wait, said once',
  { timeout: 60_000 },
  async (t) => {
    const ev = await everythingHttp(t, 'streamableHttp');
    const gw = await gatewayFor(t, ev.url);
    const sessions: Array<Record<string, string>> = [];
    for (let i = 0; i < 6; i++) {
      const h = await initSession(gw.url);
      sessions.push(h);
      const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: echo(`s${i}`) }, h);
      assert.equal(r.status, 200, r.text);
      assert.equal(textOf(r.json), `Echo: s${i}`, `session ${i}: ${r.text}`);
    }
    const stateless = await post(gw.url, modernBody(2, 'tools/call', echo('stateless')), modernHeaders('tools/call', 'echo'));
    assert.equal(textOf(stateless.json), 'Echo: stateless', stateless.text);
    // Still answered, every one, once more.
    for (const [i, h] of sessions.entries()) {
      const r = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: echo(`again ${i}`) }, h);
      assert.equal(textOf(r.json), `Echo: again ${i}`, r.text);
    }
    const full = gw.records.filter((r) => String(r.msg).startsWith('upstream GET streams at their bound'));
    assert.equal(full.length, 1);
    assert.deepEqual([full[0].upstream, full[0].streams, full[0].maxUpstreamConnections], ['ev', 3, 4]);
    // A session that ends gives its place to one that waits: deleting every client session frees them.
    for (const h of sessions) await fetch(gw.url, { method: 'DELETE', headers: h });
  },
);

test(
  'HTTP+SSE upstream, 4 connections: the sessions past the stream places are refused at once, retryably, and the others keep being answered',
  { timeout: 60_000 },
  async (t) => {
    const ev = await everythingHttp(t, 'sse');
    const gw = await gatewayFor(t, ev.url);
    // Three places: the gateway's control stream and two client sessions.
    const sessions: Array<Record<string, string>> = [];
    for (let i = 0; i < 3; i++) sessions.push(await initSession(gw.url));
    const answers = [];
    for (const [i, h] of sessions.entries()) {
      const started = Date.now();
      const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: echo(`s${i}`) }, h);
      answers.push({ text: textOf(r.json), error: (r.json as { error?: { message: string } }).error?.message, ms: Date.now() - started });
    }
    assert.deepEqual(
      answers.map((a) => a.text ?? a.error),
      ['Echo: s0', 'Echo: s1', 'Too many sessions: upstream ev: 3 HTTP+SSE sessions open, the rest of its maxUpstreamConnections kept for their messages'],
    );
    assert.ok(answers[2].ms < 4_000, `refused at once, not at the request deadline (${answers[2].ms} ms)`);
    for (const [i, h] of sessions.slice(0, 2).entries()) {
      const r = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: echo(`again ${i}`) }, h);
      assert.equal(textOf(r.json), `Echo: again ${i}`, r.text);
    }
  },
);
