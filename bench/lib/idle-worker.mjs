#!/usr/bin/env node
// A bench child that opens N idle sessions against a gateway and holds them until its stdin
// closes: `idle-worker.mjs sse|session URL N`. Several workers share the client side of a large
// idle-session row, each under the machine's per-process file-descriptor limit. It prints one
// JSON line `{"opened":N}` (or `{"error":…}`) on stdout once every session is open.

import { Agent, Pool } from 'undici';
import { openLegacy, openSession } from './mcp.mjs';

const [kind, url, nText] = process.argv.slice(2);
const n = Number(nText);
const origin = new URL(url).origin;
const parallel = 32;

const sessions = [];
let postPool;
let streams;
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

async function main() {
  let next = 0;
  if (kind === 'sse') {
    postPool = new Pool(origin, { connections: 8, keepAliveTimeout: 60_000 });
    streams = new Agent({ connections: n + 16, keepAliveTimeout: 60_000, bodyTimeout: 0 });
    await Promise.all(
      Array.from({ length: Math.min(parallel, n) }, async () => {
        while (next < n) {
          next++;
          sessions.push(await openLegacy(url, { postPool, streamDispatcher: streams, timeoutMs: 60_000 }));
        }
      }),
    );
  } else {
    postPool = new Pool(origin, { connections: 16, keepAliveTimeout: 60_000 });
    await Promise.all(
      Array.from({ length: Math.min(parallel, n) }, async () => {
        while (next < n) {
          next++;
          sessions.push(await openSession(url, postPool));
        }
      }),
    );
    // 2025 sessions hold no connection: only the ids matter.
    await postPool.close();
  }
  out({ opened: sessions.length, alive: sessions.filter((s) => !s.closed).length });
}

const stop = async () => {
  await Promise.allSettled(sessions.map((s) => (typeof s.close === 'function' ? s.close() : undefined)));
  await Promise.allSettled([postPool?.destroy(), streams?.destroy()]);
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
// Bounded: a worker never outlives the bench by more than 15 minutes.
setTimeout(stop, 15 * 60_000).unref();
main().catch((err) => {
  out({ error: String(err?.message ?? err), opened: sessions.length });
});
