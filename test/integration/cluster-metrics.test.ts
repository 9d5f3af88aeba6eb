// The admin listener's session counts on replicas: real `switchyard` CLI processes sharing a real
// Redis, each with its own raw-server stdio child; /metrics and /status.json read over HTTP.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../helpers/redis.js';
import { spawnReplica, until, type ReplicaProcess } from '../helpers/replicas.js';

const RAW = fileURLToPath(new URL('../../../test/fixtures/raw-server.mjs', import.meta.url));
const V = '2025-06-18';

/** The admin listener's origin, from its `admin listener up` line. */
async function adminOf(r: ReplicaProcess): Promise<string> {
  await until(() => r.records.some((x) => x.msg === 'admin listener up'), `${r.id}'s admin listener`);
  return String(r.records.find((x) => x.msg === 'admin listener up')!.url).replace(/\/$/, '');
}

async function rpc(origin: string, body: unknown, sid?: string): Promise<Response> {
  return fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': V } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** `switchyard_sessions{dialect="2025-03-26"}` on /metrics, and the dialect's `sessions` on /status.json. */
async function counts(admin: string): Promise<{ metric: number; status: number }> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const m = /^switchyard_sessions\{mount="raw",dialect="2025-03-26"\} (\d+)$/m.exec(text);
  const doc = (await (await fetch(`${admin}/status.json`)).json()) as { mounts: Array<{ dialects: Array<{ id: string; sessions: number }> }> };
  const status = doc.mounts[0].dialects.find((d) => d.id === '2025-03-26')!.sessions;
  return { metric: m ? Number(m[1]) : 0, status };
}

test(
  'switchyard_sessions on a replica counts the sessions it rebuilt from sealed ids, as /status.json does, and returns to 0 after DELETE elsewhere',
  { timeout: 60_000 },
  async (t) => {
    const redis = await startRedis(t);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-cluster-metrics-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const configFile = path.join(dir, 'switchyard.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        listen: { host: '127.0.0.1', port: 0, path: '' },
        dialects: { modern: true, streamable: true, legacySse: false },
        upstreams: { raw: { command: process.execPath, args: [RAW, 'stdio'], path: '/mcp' } },
      }),
    );
    const [r1, r2] = await Promise.all(['m1', 'm2'].map((id) => spawnReplica(t, { id, configFile, redis: redis.url })));
    const [a1, a2] = await Promise.all([adminOf(r1), adminOf(r2)]);
    // Ready, and Redis reached: /readyz names a Redis not (yet) reached under `degraded` only.
    const reached = async (admin: string) => {
      const r = await fetch(`${admin}/readyz`);
      return r.ok && ((await r.json()) as { degraded?: string[] }).degraded === undefined;
    };
    await until(async () => (await reached(a1)) && (await reached(a2)), 'both replicas ready, with Redis');

    const init = await rpc(r1.origin, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: V, capabilities: {}, clientInfo: { name: 'metrics', version: '1' } },
    });
    assert.equal(init.status, 200);
    const sid = init.headers.get('mcp-session-id')!;
    await init.text();
    // The session's next request goes to the other replica, which rebuilds it from the sealed id.
    const call = await rpc(r2.origin, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }, sid);
    assert.equal(call.status, 200);
    await call.text();
    assert.deepEqual(await counts(a1), { metric: 1, status: 1 });
    assert.deepEqual(await counts(a2), { metric: 1, status: 1 });

    // DELETE on r1 ends the runtime on both (broadcast): both counts go back to 0.
    const del = await fetch(`${r1.origin}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sid, 'mcp-protocol-version': V } });
    assert.equal(del.status, 200);
    assert.deepEqual(await counts(a1), { metric: 0, status: 0 });
    assert.deepEqual(await counts(a2), { metric: 0, status: 0 });
  },
);
