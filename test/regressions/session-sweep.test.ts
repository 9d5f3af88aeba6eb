// The 2025-era session sweep with several busy sessions. Found by a new-user trial (helper-9):
// with two sessions holding a GET stream (as the official SDK clients do right after
// initialize), the sweep that keeps busy sessions fresh touched each one while walking the
// session cache; each touch moved it to the front of the walk, so the walk never ended. The
// gateway spun at 100% CPU and answered nothing more, its admin listener and SIGTERM included.
// The gateway runs as a child process here, so that a hang fails the test instead of the runner.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCli } from '../helpers/cli.js';
import { initSession, openSse, post, type SseReader } from '../helpers/http.js';

test('two 2025 sessions with open GET streams survive the session sweep: the gateway still answers, and their sessions stay alive', async (t) => {
  // sessionIdleMs 2 s: the sweep runs every second (a quarter of it, at least 1 s).
  const gw = await startCli(t, ['--no-admin', '--limit', 'sessionIdleMs=2000']);
  const streams: SseReader[] = [];
  t.after(() => {
    for (const s of streams) s.close();
  });
  const version = { 'mcp-protocol-version': '2025-11-25' };
  const sessions: Array<Record<string, string>> = [];
  for (let i = 0; i < 3; i++) sessions.push({ ...(await initSession(gw.url, '2025-11-25')), ...version });
  for (const h of sessions) {
    const s = await openSse(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'], ...version });
    assert.equal(s.status, 200);
    streams.push(s);
  }
  // Past the idle time: the sweep has run several times, and only the streams keep the sessions.
  await new Promise((r) => setTimeout(r, 3_000));
  for (const [i, h] of sessions.entries()) {
    const ping = await Promise.race([
      post(gw.url, { jsonrpc: '2.0', id: i + 1, method: 'ping' }, h),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 3 s: the gateway hangs')), 3_000)),
    ]);
    assert.equal(ping.status, 200, `session ${i + 1} answers`);
    assert.deepEqual((ping.json as { result: unknown }).result, {});
  }
  assert.equal(await gw.stop('SIGTERM'), 0);
});
