// Acceptance 3: a stdio child and an HTTP upstream that write `Grüße Ωμέγα 日本語 🚀` split inside
// a character (at every byte offset) deliver it intact to every client era: 2026-07-28, 2025
// Streamable HTTP, 2024-11-05 HTTP+SSE, and the stdio front door, whose own stdin is split the
// same way.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { REPO_ROOT, gateway } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, openSse, post } from '../helpers/http.js';
import { rawHttp } from '../helpers/servers.js';

const RAW = path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs');
const TEXT = 'Grüße Ωμέγα 日本語 🚀';
const BYTES = Buffer.byteLength(TEXT, 'utf8');
const OFFSETS = Array.from({ length: BYTES + 1 }, (_, i) => i);

/** The upstreams, as CLI flags; `json` asks the HTTP fixture for a JSON answer instead of SSE. */
const UPSTREAMS: Array<{ name: string; flags: (t: { after(fn: () => void): void }) => Promise<string[]>; json: boolean }> = [
  { name: 'a stdio child', flags: async () => ['--stdio', `"${process.execPath}" "${RAW}" stdio`], json: false },
  { name: 'an HTTP server answering with SSE', flags: async (t) => ['--upstream', await rawHttp(t), '--upstream-era', '2026-07-28'], json: false },
  { name: 'an HTTP server answering with JSON', flags: async (t) => ['--upstream', await rawHttp(t), '--upstream-era', '2026-07-28'], json: true },
];

const args = (offset: number, json: boolean) => ({ offset, ...(json ? { json } : {}) });
const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0].text;

for (const up of UPSTREAMS) {
  test(`${TEXT} split at every byte offset by ${up.name} arrives intact for 2026-07-28, 2025 and 2024-11-05 clients`, async (t) => {
    const flags = await up.flags(t);
    const opts = flags[0] === '--stdio' ? { stdio: flags[1] } : { upstreamUrl: flags[1], upstreamEra: '2026-07-28' as const };
    const gw = await gateway(t, { ...opts, dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });

    const h2025 = await initSession(gw.url);

    const legacy = await openSse(gw.url.replace(/\/mcp$/, '/sse'), 'GET', { accept: 'text/event-stream' });
    t.after(() => legacy.close());
    const endpoint = new URL((await legacy.next()).data, gw.url).href;
    await post(
      endpoint,
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'u', version: '1' } } },
      { 'content-type': 'application/json' },
    );
    await legacy.next();
    await post(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'content-type': 'application/json' });

    for (const offset of OFFSETS) {
      const modern = await post(
        gw.url,
        modernBody(offset, 'tools/call', { name: 'utf8', arguments: args(offset, up.json) }),
        modernHeaders('tools/call', 'utf8'),
      );
      assert.equal(textOf((modern.json as { result: unknown }).result), TEXT, `2026 offset ${offset}`);
      const s = await post(gw.url, { jsonrpc: '2.0', id: offset + 1, method: 'tools/call', params: { name: 'utf8', arguments: args(offset, up.json) } }, h2025);
      assert.equal(textOf((s.json as { result: unknown }).result), TEXT, `2025 offset ${offset}`);
      await post(
        endpoint,
        { jsonrpc: '2.0', id: offset + 1, method: 'tools/call', params: { name: 'utf8', arguments: args(offset, up.json) } },
        { 'content-type': 'application/json' },
      );
      const ev = JSON.parse((await legacy.next()).data) as { id: number; result: unknown };
      assert.deepEqual([ev.id, textOf(ev.result)], [offset + 1, TEXT], `2024-11-05 offset ${offset}`);
    }
  });

  test(`the stdio front door: ${TEXT} split by ${up.name}, and the client's own stdin split inside a character, arrive intact`, async (t) => {
    const flags = await up.flags(t);
    const child = spawn(process.execPath, [CLI, '--serve-stdio', ...flags], { stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    t.after(() => void child.kill('SIGKILL'));
    const waiting = new Map<number, (m: { result: unknown }) => void>();
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      buf += d;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const m = JSON.parse(buf.slice(0, nl)) as { id?: number; result: unknown };
        buf = buf.slice(nl + 1);
        if (typeof m.id === 'number') waiting.get(m.id)?.(m);
      }
    });
    /** Writes one message, its bytes cut after `cut` bytes of TEXT when it holds TEXT. */
    const call = (msg: Record<string, unknown>, cut?: number) =>
      new Promise<{ result: unknown }>((resolve) => {
        waiting.set(msg.id as number, resolve);
        const bytes = Buffer.from(`${JSON.stringify(msg)}\n`, 'utf8');
        const at = cut === undefined ? -1 : bytes.indexOf(Buffer.from(TEXT, 'utf8')) + cut;
        if (at < 0) child.stdin.write(bytes);
        else {
          child.stdin.write(bytes.subarray(0, at));
          setImmediate(() => child.stdin.write(bytes.subarray(at)));
        }
      });
    await call({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'u', version: '1' } },
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    let id = 1;
    for (const offset of OFFSETS) {
      const r = await call({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'utf8', arguments: args(offset, up.json) } });
      assert.equal(textOf(r.result), TEXT, `upstream split at ${offset}`);
      const e = await call({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'echo', arguments: { message: TEXT } } }, offset);
      assert.equal(textOf(e.result), `Echo: ${TEXT}`, `stdin split at ${offset}`);
    }
    child.stdin.end();
    assert.equal(await exited, 0);
  });
}
