// A browser page on another origin (CORS) ends its 2025 session right after aborting its GET
// stream: initialize, notifications/initialized, the GET stream (200 text/event-stream), abort,
// DELETE. The stream's head said `Cache-Control: no-cache`, which Chromium stores: its HTTP cache
// was still writing the GET's entry for the MCP URL when the DELETE of that URL came, restarted
// the DELETE and sent it twice, and the page read the second one's 404 'Session not found' for a
// session the first had ended (found by h-trial11). With `no-store` the DELETE goes once: 200.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumPage, noChromium, pageServer } from '../helpers/chromium.js';
import { startCli } from '../helpers/cli.js';

test('a page aborts its 2025 GET stream and DELETEs the session at once: answered 200, not the 404 of a DELETE sent twice', { skip: noChromium }, async (t) => {
  const origin = await pageServer(t);
  // The CLI, as a user runs it (the race did not show through the library's gateway in a test).
  const cli = await startCli(t, ['--no-admin', '--cors-origin', origin]);
  const url = cli.url;
  const { page } = await chromiumPage(t);
  await page.goto(`${origin}/`);
  const seen = await page.evaluate(async (url) => {
    const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const out: string[] = [];
    const init = await fetch(url, {
      method: 'POST',
      headers: H,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
      }),
    });
    const sid = init.headers.get('mcp-session-id') ?? '';
    await init.text();
    const S = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const initd = await fetch(url, { method: 'POST', headers: { ...H, ...S }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    out.push(`initialized ${initd.status}`);
    const ac = new AbortController();
    const get = await fetch(url, { headers: { accept: 'text/event-stream', ...S }, signal: ac.signal });
    out.push(`get ${get.status} ${get.headers.get('content-type')}`);
    ac.abort();
    const del = await fetch(url, { method: 'DELETE', headers: S });
    out.push(`delete ${del.status} ${await del.text()}`);
    out.push(sid);
    return out;
  }, url);
  seen.pop();
  assert.deepEqual(seen, ['initialized 202', 'get 200 text/event-stream', 'delete 200 ']);
});
