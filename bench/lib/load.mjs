// Load generators: autocannon for request/response paths (own latency record at µs
// resolution, since autocannon's histogram keeps whole milliseconds), and an SSE load client
// for the 2024-11-05 round trip (POST → matching `message` event).

import autocannon from 'autocannon';
import { Agent, Pool } from 'undici';
import { openLegacy } from './mcp.mjs';

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

const MAX_SAMPLES = 400_000;

function summarize(lat, ok, bad, seconds) {
  lat.sort((a, b) => a - b);
  return { rps: ok / seconds, p50Ms: percentile(lat, 50), p99Ms: percentile(lat, 99), ok, bad };
}

/**
 * One autocannon run of `seconds` at `connections`. Every request gets its own JSON-RPC id
 * (`"[<id>]"` in the body becomes a fresh number); an answer counts only when it is 2xx and its
 * body contains `expect`.
 */
export function cannon({ url, headers, body, connections, seconds, expect }) {
  return new Promise((resolve, reject) => {
    const lat = [];
    let ok = 0;
    let bad = 0;
    let wrongBody = 0;
    const t0 = process.hrtime.bigint();
    // a fresh numeric id per request (autocannon's idReplacement sends nothing in v8 here)
    const [pre, post] = body.split('"[<id>]"');
    let n = 0;
    const req = { method: 'POST', headers, body };
    if (post !== undefined) req.setupRequest = (r) => ({ ...r, body: pre + ++n + post });
    if (expect)
      req.onResponse = (status, text) => {
        if (status >= 200 && status < 300 && !String(text).includes(expect)) wrongBody++;
      };
    const inst = autocannon({ url, requests: [req], connections, pipelining: 1, duration: seconds, timeout: 10, sampleInt: 25 }, (err, res) => {
      if (err) return reject(err);
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const s = summarize(lat, ok - wrongBody, bad + wrongBody + res.errors + res.timeouts, Math.max(secs, seconds));
      resolve(s);
    });
    inst.on('response', (_c, status, _bytes, ms) => {
      if (status >= 200 && status < 300) {
        ok++;
        if (lat.length < MAX_SAMPLES) lat.push(ms);
      } else bad++;
    });
  });
}

/**
 * SSE round-trip load: `connections` legacy sessions (set up before the clock starts), each
 * with one request in flight at a time, for `seconds`.
 */
export async function sseLoad({ sseUrl, kind, params, connections, seconds, sessions: reuse }) {
  const sessions = reuse ?? (await openLegacySessions(sseUrl, connections));
  const lat = [];
  let ok = 0;
  let bad = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    sessions.list.map(async (s) => {
      while (performance.now() < end && !s.closed) {
        const a = performance.now();
        try {
          const m = await s.rpc(kind, params);
          if (m.result) {
            ok++;
            if (lat.length < MAX_SAMPLES) lat.push(performance.now() - a);
          } else bad++;
        } catch {
          bad++;
          if (s.closed) break;
        }
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  return { ...summarize(lat, ok, bad, secs), sessions };
}

/** Opens `n` legacy SSE sessions (each with initialize) with their own dispatchers. */
export async function openLegacySessions(sseUrl, n, { parallel = 32 } = {}) {
  const origin = new URL(sseUrl).origin;
  const postPool = new Pool(origin, { connections: Math.max(1, Math.min(n, 64)), pipelining: 1, keepAliveTimeout: 30_000 });
  const streamAgent = new Agent({ connections: n + 16, keepAliveTimeout: 30_000, bodyTimeout: 0 });
  const list = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, n) }, async () => {
      while (next < n) {
        next++;
        list.push(await openLegacy(sseUrl, { postPool, streamDispatcher: streamAgent }));
      }
    }),
  );
  return {
    list,
    async close() {
      await Promise.all(list.map((s) => s.close()));
      await Promise.allSettled([postPool.destroy(), streamAgent.destroy()]);
    },
  };
}
