// A subscription that came and went while an earlier one was still on its way upstream cost an
// HTTP+SSE upstream session a `resources/subscribe` and a `resources/unsubscribe` it never needed: the session queued each change as it happened, where a stdio child reads each URI's want when
// its turn comes and sends nothing for one wanted no longer. The three transports now share one
// scheduler (src/upstreams/subscription-sync.ts; docs/upstreams.md, "Resource subscriptions
// upstream").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { gateway, NO_COVERAGE_ENV, REPO_ROOT } from '../helpers/gateway.js';
import { listenResources, modernBody, modernHeaders, post } from '../helpers/http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/subscribe-counting-sse-server.mjs');

/** Starts the fixture, each subscription change answered after `holdMs`; resolves with its `/sse` URL. */
async function countingServer(t: { after(fn: () => void): void }, holdMs: number): Promise<string> {
  const child = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, ...NO_COVERAGE_ENV, HOLD_MS: String(holdMs) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => void child.kill());
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
      const m = /listening (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`fixture exited ${String(code)}`)));
  });
}

test('HTTP+SSE: a listen opened and closed while another URI is being subscribed sends the upstream nothing for its URI', async (t) => {
  const upstreamUrl = await countingServer(t, 1000);
  const gw = await gateway(t, { upstreamUrl, upstreamEra: '2024-11-05' });
  // a's subscribe is held by the upstream for a second; b comes and goes meanwhile; c comes after.
  await listenResources(t, gw.url, ['demo://came/a']);
  const passing = await listenResources(t, gw.url, ['demo://came/b']);
  passing.close();
  await listenResources(t, gw.url, ['demo://came/c']);

  const got = async (id: number) => {
    const r = await post(gw.url, modernBody(id, 'tools/call', { name: 'got', arguments: {} }), modernHeaders('tools/call', 'got'));
    assert.equal(r.status, 200, r.text);
    return JSON.parse((r.json as { result: { content: Array<{ text: string }> } }).result.content[0].text) as string[];
  };
  // Changes go one at a time, so once c's subscribe arrived every change before it did.
  let seen = await got(1);
  for (let i = 2; !seen.includes('resources/subscribe demo://came/c') && i < 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    seen = await got(i);
  }
  assert.deepEqual(seen, ['resources/subscribe demo://came/a', 'resources/subscribe demo://came/c']);
});
