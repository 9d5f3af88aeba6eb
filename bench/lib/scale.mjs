// The bench's larger rows: many idle sessions held by worker processes while another client
// measures tools/call latency, and one big tool result per era with the peak RSS it costs.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { cannon, openLegacySessions } from './load.mjs';
import { messagesOf, modernRequest, openSession, sessionRequest } from './mcp.mjs';
import { treeRssKib } from './procs.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Sessions one worker process holds at most: an HTTP+SSE session holds a connection (so far under
 * the per-process file-descriptor limit), a 2025 session only its id (fewer workers: less CPU
 * taken from the gateway on two cores).
 */
const PER_WORKER = { sse: 4_000, session: 25_000 };

/** The per-process open-file limit (soft) of process `pid` (default: this one), from /proc. */
export function fileLimit(pid = 'self') {
  try {
    const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    return Number(line.trim().split(/\s+/)[3]);
  } catch {
    return 1024;
  }
}

/** Spawns workers holding `n` sessions of `kind` (`sse` or `session`); resolves when all are open. */
async function holdSessions(kind, url, n) {
  const workers = [];
  const counts = [];
  for (let left = n; left > 0; left -= PER_WORKER[kind]) counts.push(Math.min(PER_WORKER[kind], left));
  // Every worker's own outcome, so that a failure reports the sessions open in all, not one worker's.
  const outcomes = await Promise.all(
    counts.map(
      (k) =>
        new Promise((resolve) => {
          const child = spawn(process.execPath, [join(HERE, 'idle-worker.mjs'), kind, url, String(k)], { stdio: ['pipe', 'pipe', 'inherit'] });
          workers.push(child);
          const rl = createInterface({ input: child.stdout });
          const timer = setTimeout(() => resolve({ opened: 0, error: `${k} ${kind} sessions not open within 300 s` }), 300_000);
          rl.once('line', (line) => {
            clearTimeout(timer);
            resolve(JSON.parse(line));
          });
          child.once('exit', (code) => resolve({ opened: 0, error: `exited ${code}` }));
        }),
    ),
  );
  const failed = outcomes.find((o) => o.error);
  if (failed) {
    for (const w of workers) w.kill('SIGKILL');
    const reached = outcomes.reduce((a, o) => a + (o.opened ?? 0), 0);
    const err = new Error(`idle workers: ${failed.error} (${reached} of ${n} open in all, ${outcomes.length} workers)`);
    err.reached = reached;
    throw err;
  }
  return {
    alive: outcomes.reduce((a, o) => a + o.alive, 0),
    async release() {
      await Promise.all(
        workers.map(
          (w) =>
            new Promise((resolve) => {
              w.once('exit', resolve);
              w.stdin.end();
              setTimeout(() => w.kill('SIGKILL'), 30_000).unref();
            }),
        ),
      );
    },
  };
}

/**
 * Many idle sessions: RSS growth of the gateway's process tree per session, and the p50/p99 of a
 * 2026-07-28 tools/call from another client while they are open. `ports`: the gateway's
 * processes, one port each (all in `proc`'s tree); the sessions are split evenly between them,
 * and the latency is the worst of a probe of each.
 */
export async function scaleCase({ proc, ports, kind, sessions, seconds, settleMs }) {
  const origins = ports.map((p) => `http://127.0.0.1:${p}`);
  const urlOf = (origin) => (kind === 'sse' ? `${origin}/sse` : `${origin}/mcp`);
  // Warm the heap first (as the idle rows do), then the baseline.
  const warm = modernRequest('tools/call');
  for (const origin of origins) {
    await cannon({ url: `${origin}/mcp`, ...warm, connections: 16, seconds: 0.5 });
    if (kind === 'sse') (await openLegacySessions(urlOf(origin), 16)).close();
    else for (let i = 0; i < 16; i++) await openSession(urlOf(origin));
  }
  await sleep(settleMs);
  const before = treeRssKib(proc.pid);
  const shares = origins.map((_, i) => Math.floor(sessions / origins.length) + (i < sessions % origins.length ? 1 : 0));
  const held = [];
  try {
    // One process's sessions at a time: a failure names the sessions open in all.
    for (const [i, origin] of origins.entries()) {
      try {
        held.push(await holdSessions(kind, urlOf(origin), shares[i]));
      } catch (err) {
        err.reached = (err.reached ?? 0) + held.reduce((a, h) => a + h.alive, 0);
        throw err;
      }
    }
    await sleep(settleMs);
    const after = treeRssKib(proc.pid);
    const alive = held.reduce((a, h) => a + h.alive, 0);
    const probes = [];
    for (const origin of origins) probes.push(await cannon({ url: `${origin}/mcp`, ...warm, connections: 4, seconds, expect: 'switchyard-bench' }));
    return {
      sessions: alive,
      ...(origins.length > 1 ? { processes: origins.length, sessionsPerProcess: held.map((h) => h.alive) } : {}),
      kibPerSession: (after - before) / alive,
      rssBeforeKib: before,
      rssAfterKib: after,
      rps: probes.reduce((a, p) => a + p.rps, 0),
      p50Ms: Math.max(...probes.map((p) => p.p50Ms)),
      p99Ms: Math.max(...probes.map((p) => p.p99Ms)),
      bad: probes.reduce((a, p) => a + p.bad, 0),
    };
  } finally {
    for (const h of held) await h.release();
  }
}

/** A text of `bytes` bytes (ASCII), deterministic. */
export function payloadText(bytes) {
  const unit = 'switchyard-payload-0123456789-';
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

/** One process's RSS, KiB (0 once it is gone). */
function ownRssKib(pid) {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * Samples RSS every 5 ms until `done` settles: of the process tree rooted at `pid` (the gateway
 * and its upstream children) and of the gateway's own process. Resolves with both peaks, KiB.
 */
function peakRss(pid, done) {
  let peak = treeRssKib(pid);
  let ownPeak = ownRssKib(pid);
  let stop = false;
  const tick = async () => {
    while (!stop) {
      peak = Math.max(peak, treeRssKib(pid));
      ownPeak = Math.max(ownPeak, ownRssKib(pid));
      await sleep(5);
    }
  };
  const sampler = tick();
  return done
    .finally(() => (stop = true))
    .then(async (v) => {
      await sampler;
      return { value: v, peak, ownPeak };
    });
}

/**
 * One big echo through an era (`modern`, `session`, `sse`): the time of each of `runs` calls, the
 * answer checked whole, and the peak RSS growth during the call (KiB) of the server's process tree
 * (`peakRssGrowthKib`, with its upstream children) and of the gateway's process alone
 * (`gatewayPeakRssGrowthKib`); each also as a multiple of the payload.
 */
export async function payloadCase({ proc, port, era, base, sse, bytes, runs }) {
  const origin = `http://127.0.0.1:${port}`;
  const text = payloadText(bytes);
  const params = { name: 'echo', arguments: { message: text } };
  let call;
  let close;
  if (era === 'modern') {
    const pool = new Pool(origin, { connections: 1 });
    close = () => pool.destroy();
    const req = modernRequest('tools/call', 1);
    const body = JSON.stringify({ ...JSON.parse(req.body), params: { ...params, _meta: JSON.parse(req.body).params._meta } });
    call = async () => {
      const r = await pool.request({ path: base, method: 'POST', headers: req.headers, body, headersTimeout: 60_000, bodyTimeout: 60_000 });
      return messagesOf(r.headers['content-type'], await r.body.text());
    };
  } else if (era === 'session') {
    const pool = new Pool(origin, { connections: 1 });
    close = () => pool.destroy();
    const s = await openSession(`${origin}${base}`, pool);
    const req = sessionRequest('tools/call', s, 1);
    const body = JSON.stringify({ ...JSON.parse(req.body), params });
    call = async () => {
      const r = await pool.request({ path: base, method: 'POST', headers: req.headers, body, headersTimeout: 60_000, bodyTimeout: 60_000 });
      return messagesOf(r.headers['content-type'], await r.body.text());
    };
  } else {
    const sessions = await openLegacySessions(`${origin}${sse}`, 1);
    close = () => sessions.close();
    call = async () => [await sessions.list[0].rpc('tools/call', params)];
  }
  try {
    const times = [];
    let peakKib = 0;
    let ownPeakKib = 0;
    let intact = true;
    // One call first, so that the heap has grown to the payload once: the rows measure the
    // steady state, not the first allocation.
    await call();
    for (let i = 0; i < runs; i++) {
      const before = treeRssKib(proc.pid);
      const ownBefore = ownRssKib(proc.pid);
      const t0 = performance.now();
      const { value, peak, ownPeak } = await peakRss(proc.pid, call());
      times.push(performance.now() - t0);
      peakKib = Math.max(peakKib, peak - before);
      ownPeakKib = Math.max(ownPeakKib, ownPeak - ownBefore);
      const got = value.find((m) => m && 'result' in m)?.result?.content?.[0]?.text;
      if (got !== `Echo: ${text}`) intact = false;
    }
    times.sort((a, b) => a - b);
    return {
      bytes,
      runs,
      msMedian: times[times.length >> 1],
      peakRssGrowthKib: peakKib,
      peakToPayload: (peakKib * 1024) / bytes,
      gatewayPeakRssGrowthKib: ownPeakKib,
      gatewayPeakToPayload: (ownPeakKib * 1024) / bytes,
      intact,
    };
  } finally {
    await close();
  }
}

/** The same big echo straight to a stdio server (no gateway): the direct time. */
export async function directStdioPayload({ command, args, bytes, runs, env }) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'], env });
  const rl = createInterface({ input: child.stdout, crlfDelay: Infinity });
  const waiting = new Map();
  rl.on('line', (line) => {
    let m;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    waiting.get(m.id)?.(m);
  });
  const rpc = (id, method, params) =>
    new Promise((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  try {
    await rpc(0, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const text = payloadText(bytes);
    const times = [];
    let intact = true;
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const m = await rpc(i + 1, 'tools/call', { name: 'echo', arguments: { message: text } });
      times.push(performance.now() - t0);
      if (m?.result?.content?.[0]?.text !== `Echo: ${text}`) intact = false;
    }
    times.sort((a, b) => a - b);
    return { bytes, runs, msMedian: times[times.length >> 1], intact };
  } finally {
    child.kill('SIGKILL');
  }
}
