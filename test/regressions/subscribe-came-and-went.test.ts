// A subscription that came and went while an earlier one was still on its way upstream cost an
// HTTP+SSE or a 2025 Streamable HTTP upstream session a `resources/subscribe` and a
// `resources/unsubscribe` it never needed: the session queued each change as it happened, where a stdio child reads each URI's want when
// its turn comes and sends nothing for one wanted no longer. The three transports now share one
// scheduler (src/upstreams/subscription-sync.ts; docs/upstreams.md, "Resource subscriptions
// upstream").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gateway, NO_COVERAGE_ENV, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, listenResources, modernBody, modernHeaders, openSse, post } from '../helpers/http.js';
import { everythingHttp } from '../helpers/servers.js';

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

/**
 * A proxy in front of `target` that records `<method> <uri>` of each subscription change POSTed
 * through it, in order, and passes each on only after `holdMs`; everything else at once.
 */
async function holdingProxy(t: { after(fn: () => void | Promise<void>): void }, target: string, holdMs: number): Promise<{ url: string; got: string[] }> {
  const to = new URL(target);
  const got: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let hold = 0;
      if (req.method === 'POST') {
        try {
          const m = JSON.parse(body.toString()) as { method?: string; params?: { uri?: string } };
          if (m.method === 'resources/subscribe' || m.method === 'resources/unsubscribe') {
            got.push(`${m.method} ${m.params?.uri}`);
            hold = holdMs;
          }
        } catch {
          // not JSON: passed on as it is
        }
      }
      setTimeout(() => {
        const up = http.request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.on('error', () => res.destroy());
        up.end(body);
      }, hold);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${to.pathname}`, got };
}

/** Waits (at most 10 s) until `got` holds `change`. */
async function arrived(got: readonly string[], change: string): Promise<void> {
  for (let i = 0; i < 200 && !got.includes(change); i++) await new Promise((r) => setTimeout(r, 50));
}

test('2025 Streamable HTTP: a listen opened and closed while another URI is being subscribed sends the upstream nothing for its URI', async (t) => {
  const everything = await everythingHttp(t, 'streamableHttp');
  const proxy = await holdingProxy(t, everything.url, 1000);
  const gw = await gateway(t, { upstreamUrl: proxy.url, upstreamEra: '2025-11-25' });
  await listenResources(t, gw.url, ['demo://came/a']);
  // a's subscribe is on its way (held a second): b comes and goes meanwhile, c comes after.
  await arrived(proxy.got, 'resources/subscribe demo://came/a');
  const passing = await listenResources(t, gw.url, ['demo://came/b']);
  passing.close();
  await listenResources(t, gw.url, ['demo://came/c']);
  // One at a time, in the order queued: once c's subscribe arrived, every change before it did.
  await arrived(proxy.got, 'resources/subscribe demo://came/c');
  assert.deepEqual(proxy.got, ['resources/subscribe demo://came/a', 'resources/subscribe demo://came/c']);
});

test('2025 Streamable HTTP: a 2025 client that subscribes and unsubscribes a URI while another is being subscribed sends the upstream nothing for it', async (t) => {
  const everything = await everythingHttp(t, 'streamableHttp');
  const proxy = await holdingProxy(t, everything.url, 1000);
  const gw = await gateway(t, { upstreamUrl: proxy.url, upstreamEra: '2025-11-25' });
  const h = await initSession(gw.url, '2025-11-25');
  // Its GET stream is what takes resource updates: the subscriptions go upstream for it.
  const stream = await openSse(gw.url, 'GET', { ...h, accept: 'text/event-stream' });
  t.after(() => stream.close());
  const ask = async (id: number, method: string, uri: string) => {
    const r = await post(gw.url, { jsonrpc: '2.0', id, method, params: { uri } }, h);
    assert.equal(r.status, 200, r.text);
  };
  await ask(1, 'resources/subscribe', 'demo://came/a');
  await arrived(proxy.got, 'resources/subscribe demo://came/a');
  await ask(2, 'resources/subscribe', 'demo://came/b');
  await ask(3, 'resources/unsubscribe', 'demo://came/b');
  await ask(4, 'resources/subscribe', 'demo://came/c');
  await arrived(proxy.got, 'resources/subscribe demo://came/c');
  assert.deepEqual(proxy.got, ['resources/subscribe demo://came/a', 'resources/subscribe demo://came/c']);
});
