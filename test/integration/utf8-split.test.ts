// Every byte-to-text conversion on the upstream side is streaming-safe: an upstream message cut
// at any byte offset of `Grüße Ωμέγα 日本語 🚀` (inside a character, too) arrives intact, from a
// real stdio child and from a real HTTP server (SSE and JSON answers).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { GatewayOptions } from '../../src/gateway.js';
import { REPO_ROOT, gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { rawHttp } from '../helpers/servers.js';

const RAW = path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs');
const TEXT = 'Grüße Ωμέγα 日本語 🚀';
const BYTES = Buffer.byteLength(TEXT, 'utf8');

const UPSTREAMS: Array<{ name: string; opts: (t: { after(fn: () => void): void }) => Promise<Partial<GatewayOptions>>; json: boolean[] }> = [
  { name: 'a stdio child', opts: async () => ({ stdio: `"${process.execPath}" "${RAW}" stdio` }), json: [false] },
  { name: 'an HTTP server (SSE and JSON answers)', opts: async (t) => ({ upstreamUrl: await rawHttp(t), upstreamEra: '2026-07-28' }), json: [false, true] },
];

for (const up of UPSTREAMS) {
  test(`${TEXT} cut at every one of its ${BYTES + 1} byte offsets arrives intact from ${up.name}`, async (t) => {
    const gw = await gateway(t, await up.opts(t));
    for (const json of up.json) {
      for (let offset = 0; offset <= BYTES; offset++) {
        const r = await post(
          gw.url,
          modernBody(offset, 'tools/call', { name: 'utf8', arguments: { offset, ...(json ? { json } : {}) } }),
          modernHeaders('tools/call', 'utf8'),
        );
        assert.equal(r.status, 200, r.text);
        assert.deepEqual((r.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: TEXT }], `offset ${offset}, json ${json}`);
      }
    }
  });
}
