// Regression from a hostile-client trial: on an HTTP+SSE (2024-11-05) upstream session the
// gateway POSTed each `resources/subscribe` as soon as a subscriber wanted its URI, so one
// 2026-07-28 client's `subscriptions/listen` of 1,024 URIs was 1,024 POSTs at once, queued in
// front of every other client's call on the upstream's connections. They now go one after
// another on each session, as on a 2025 upstream session (docs/upstreams.md, "Subscriptions on
// a stdio child" and "Per-session subscriptions").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { gateway, NO_COVERAGE_ENV, REPO_ROOT } from '../helpers/gateway.js';
import { listenResources, modernBody, modernHeaders, post } from '../helpers/http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/subscribe-counting-sse-server.mjs');

/** Starts the fixture; resolves with its `/sse` URL. */
async function countingServer(t: { after(fn: () => void): void }): Promise<string> {
  const child = spawn(process.execPath, [FIXTURE], { env: { ...process.env, ...NO_COVERAGE_ENV, HOLD_MS: '50' }, stdio: ['ignore', 'pipe', 'inherit'] });
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

test('a listen of many URIs in front of an HTTP+SSE upstream subscribes them one POST at a time', async (t) => {
  const upstreamUrl = await countingServer(t);
  const gw = await gateway(t, { upstreamUrl, upstreamEra: '2024-11-05' });
  const uris = Array.from({ length: 12 }, (_, i) => `demo://burst/${i}`);
  await listenResources(t, gw.url, uris);

  // The upstream says how many subscriptions it got and the most it held open at once.
  const counts = async (id: number) => {
    const r = await post(gw.url, modernBody(id, 'tools/call', { name: 'peak', arguments: {} }), modernHeaders('tools/call', 'peak'));
    assert.equal(r.status, 200, r.text);
    return JSON.parse((r.json as { result: { content: Array<{ text: string }> } }).result.content[0].text) as { peak: number; seen: number };
  };
  let c = await counts(1);
  for (let i = 2; c.seen < uris.length && i < 600; i++) {
    await new Promise((r) => setTimeout(r, 50));
    c = await counts(i);
  }
  assert.deepEqual(c, { peak: 1, seen: uris.length });
});
