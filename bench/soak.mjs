#!/usr/bin/env node
// The soak: Switchyard (embedded demo) under a fixed rate of every era with session churn for N
// minutes, sampling the gateway's RSS, open file descriptors and active handles every 10 s.
//
//   npm run soak -- --minutes 60          (not in CI)
//   npm run soak -- --minutes 2 --rate 40
//   npm run soak -- --minutes 60 --layers all [--principals 2000]
//   npm run soak -- --minutes 60 --upstream stdio     (or http, sse)
//
// `--layers` turns layers on as bench/run.mjs's layer rows do (jwt: tokens of the bench issuer;
// policy: ten rules every tools/call evaluates; metrics; tracing with the drop exporter; strict;
// `all` for every one). With jwt, requests rotate over `--principals` subjects (default 2,000,
// more than the per-principal tables keep before they sweep), so that what the gateway keeps per
// principal is churned as well as what it keeps per session.
//
// `--upstream` puts server-everything behind the gateway instead of the embedded demo, so that the
// connector's own state is soaked too: `stdio` (a child over stdio, one for the gateway), `http`
// (its Streamable HTTP server, 2025 sessions upstream) or `sse` (its 2024-11-05 HTTP+SSE server).
// Its `echo` answers as the demo's does. The bounds are judged on the gateway's own process; the
// stdio child's RSS is sampled beside it (the tree), as is the HTTP server's, since a leak there is
// server-everything's, not ours.
//
// Exits non-zero when RSS, descriptors or handles grow past their bounds after the warm-up, or
// when any reply is lost or misdelivered (each echo carries a token unique to its request).
// Writes bench/results/soak.json and bench/results/soak.svg (RSS and descriptors over time).

import { readdirSync, readFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool, request } from 'undici';
import { freePort, installCleanup, killAllNow, start, treeRssKib, waitFor } from './lib/procs.mjs';
import { TEN_RULES_POLICY } from './lib/layers.mjs';
import { messagesOf, modernRequest, openLegacy, openSession } from './lib/mcp.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const SWITCHYARD = join(process.env.SWITCHYARD_ROOT ? resolve(process.env.SWITCHYARD_ROOT) : ROOT, 'dist', 'src', 'cli', 'main.js');
const argv = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const text = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? String(argv[i + 1]) : dflt;
};
const MINUTES = arg('minutes', 10);
const UPSTREAMS = ['demo', 'stdio', 'http', 'sse'];
/** What the gateway fronts: the embedded demo, or server-everything over stdio, Streamable HTTP or HTTP+SSE. */
const UPSTREAM = text('upstream', 'demo');
if (!UPSTREAMS.includes(UPSTREAM)) throw new Error(`unknown upstream ${UPSTREAM} (known: ${UPSTREAMS.join(', ')})`);
const EVERYTHING = join(BENCH, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const KNOWN_LAYERS = ['jwt', 'policy', 'metrics', 'tracing', 'strict'];
const LAYERS = text('layers', '') === 'all' ? KNOWN_LAYERS : text('layers', '').split(',').filter(Boolean);
for (const l of LAYERS) if (!KNOWN_LAYERS.includes(l)) throw new Error(`unknown layer ${l} (known: ${KNOWN_LAYERS.join(', ')}, or all)`);
/** Subjects the JWT layer's requests rotate over. */
const PRINCIPALS = arg('principals', 2000);
/** Requests per second per era (three eras). */
const RATE = arg('rate', 30);
const SAMPLE_MS = 10_000;
/** Warm-up before the bounds apply, ms (heaps and pools settle). */
const WARMUP_MS = Math.min(120_000, (MINUTES * 60_000) / 4);
/** Growth allowed after the warm-up. */
const BOUNDS = { rssMiB: 64, fds: 64, handles: 128 };

installCleanup();
const deadline = setTimeout(
  () => {
    process.stderr.write('soak: over its time bound, stopping\n');
    killAllNow();
    process.exit(1);
  },
  (MINUTES * 60 + 120) * 1000,
);
deadline.unref();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (s) => process.stderr.write(`${s}\n`);

const fds = (pid) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
};

/** Active handles of the gateway, from the admin listener's process metrics (when it has one). */
async function handles(adminPort) {
  if (!adminPort) return NaN;
  try {
    const r = await request(`http://127.0.0.1:${adminPort}/metrics`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
    const text = await r.body.text();
    const m = /^nodejs_active_handles_total(?:\{[^}]*\})? (\d+)/m.exec(text);
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** The process's own resident set, KiB (0 when it is gone). */
const ownRssKib = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};

const stats = { sent: 0, answered: 0, lost: 0, misdelivered: 0, errors: 0, sessions: 0 };

/** With the jwt layer: the issuer's URL and the tokens minted so far, by subject index (at most PRINCIPALS). */
const jwt = { issuer: undefined, audience: undefined, tokens: new Map() };
let nextPrincipal = 0;
/** The headers of the next principal in the rotation (`{}` without the jwt layer). */
async function principal() {
  if (!jwt.issuer) return {};
  const i = nextPrincipal++ % PRINCIPALS;
  let token = jwt.tokens.get(i);
  if (!token) {
    const r = await request(`${jwt.issuer}/token?aud=${encodeURIComponent(jwt.audience)}&sub=soak-principal-${i}`);
    token = (await r.body.json()).access_token;
    jwt.tokens.set(i, token);
  }
  return { authorization: `Bearer ${token}` };
}
let seq = 0;
const token = () => `soak-${process.pid}-${++seq}`;
const echoOf = (m) => m?.result?.content?.[0]?.text;

async function modernLoop(url, until) {
  const pool = new Pool(new URL(url).origin, { connections: 4 });
  const base = modernRequest('tools/call', 1);
  const body0 = JSON.parse(base.body);
  while (Date.now() < until) {
    const t = token();
    stats.sent++;
    const body = JSON.stringify({ ...body0, id: t, params: { ...body0.params, arguments: { message: t } } });
    try {
      const headers = { ...base.headers, ...(await principal()) };
      const r = await pool.request({ path: '/mcp', method: 'POST', headers, body, headersTimeout: 10_000, bodyTimeout: 10_000 });
      const msg = messagesOf(r.headers['content-type'], await r.body.text()).find((m) => m && 'result' in m);
      check(msg, t);
    } catch {
      stats.lost++;
    }
    await sleep(1000 / RATE);
  }
  await pool.destroy();
}

function check(msg, t) {
  if (!msg) return void stats.lost++;
  if (msg.id !== t || echoOf(msg) !== `Echo: ${t}`) return void stats.misdelivered++;
  stats.answered++;
}

/** 2025 sessions: open, ten calls, DELETE; again. */
async function sessionLoop(url, until) {
  const pool = new Pool(new URL(url).origin, { connections: 2 });
  while (Date.now() < until) {
    let s;
    const who = await principal().catch(() => ({}));
    try {
      s = await openSession(url, pool, who);
      stats.sessions++;
    } catch {
      stats.errors++;
      await sleep(100);
      continue;
    }
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': s.id,
      'mcp-protocol-version': s.version,
      ...who,
    };
    for (let i = 0; i < 10 && Date.now() < until; i++) {
      const t = token();
      stats.sent++;
      try {
        const r = await pool.request({
          path: '/mcp',
          method: 'POST',
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id: t, method: 'tools/call', params: { name: 'echo', arguments: { message: t } } }),
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        });
        check(
          messagesOf(r.headers['content-type'], await r.body.text()).find((m) => m && 'result' in m),
          t,
        );
      } catch {
        stats.lost++;
      }
      await sleep(1000 / RATE);
    }
    const d = await pool.request({ path: '/mcp', method: 'DELETE', headers }).catch(() => undefined);
    await d?.body.dump();
  }
  await pool.destroy();
}

/** HTTP+SSE sessions: open the stream, ten calls, close it; again. */
async function sseLoop(sseUrl, until) {
  while (Date.now() < until) {
    let s;
    const who = await principal().catch(() => ({}));
    try {
      s = await openLegacy(sseUrl, { timeoutMs: 10_000, headers: who });
      stats.sessions++;
    } catch {
      stats.errors++;
      await sleep(100);
      continue;
    }
    for (let i = 0; i < 10 && Date.now() < until; i++) {
      const t = token();
      stats.sent++;
      try {
        const m = await s.rpc('tools/call', { name: 'echo', arguments: { message: t } });
        if (echoOf(m) !== `Echo: ${t}`) stats.misdelivered++;
        else stats.answered++;
      } catch {
        stats.lost++;
      }
      await sleep(1000 / RATE);
    }
    await s.close();
  }
}

/** A small SVG line chart of RSS (MiB) and descriptors over time (and, with `--upstream`, the RSS with the upstream's). */
function svg(samples) {
  const W = 640;
  const H = 240;
  const pad = 40;
  const tMax = Math.max(1, samples[samples.length - 1]?.tS ?? 1);
  const series = [
    { key: 'rssMiB', color: '#1f77b4', label: 'RSS MiB' },
    { key: 'fds', color: '#d62728', label: 'open fds' },
    ...(UPSTREAM === 'demo' ? [] : [{ key: 'treeRssMiB', color: '#2ca02c', label: 'RSS MiB with the upstream' }]),
  ];
  const paths = series.map((s) => {
    const vals = samples.map((x) => x[s.key]).filter(Number.isFinite);
    const max = Math.max(1, ...vals) * 1.1;
    const d = samples
      .filter((x) => Number.isFinite(x[s.key]))
      .map((x, i) => `${i ? 'L' : 'M'}${(pad + ((W - 2 * pad) * x.tS) / tMax).toFixed(1)},${(H - pad - ((H - 2 * pad) * x[s.key]) / max).toFixed(1)}`)
      .join(' ');
    return `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.5"/><text x="${W - pad}" y="${pad - 8 + 14 * series.indexOf(s)}" font-size="11" text-anchor="end" fill="${s.color}">${s.label} (max ${max.toFixed(0)})</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif"><rect width="${W}" height="${H}" fill="white"/><line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="#888"/><line x1="${pad}" y1="${pad}" x2="${pad}" y2="${H - pad}" stroke="#888"/><text x="${W / 2}" y="${H - 10}" font-size="11" text-anchor="middle">minutes (0–${(tMax / 60).toFixed(0)})</text>${paths.join('')}</svg>\n`;
}

async function main() {
  const port = await freePort();
  const adminPort = await freePort();
  const args = [SWITCHYARD, '--port', String(port), '--legacy-sse', '--log-level', 'warn'];
  const env = {};
  if (LAYERS.length > 0) {
    // The layers as bench/run.mjs's layer rows set them up, in a config file of this run's own.
    const config = {};
    if (LAYERS.includes('jwt')) {
      const issuerPort = await freePort();
      const issuer = start('issuer', process.execPath, [join(BENCH, 'servers', 'issuer.mjs'), String(issuerPort)]);
      jwt.issuer = `http://127.0.0.1:${issuerPort}`;
      jwt.audience = `http://127.0.0.1:${port}/mcp`;
      await waitFor(
        () =>
          request(`${jwt.issuer}/jwks`).then(
            async (r) => (await r.body.dump(), r.statusCode === 200),
            () => false,
          ),
        { timeoutMs: 10_000, what: 'issuer', proc: issuer },
      );
      config.auth = { bearer: { issuer: jwt.issuer } };
    }
    if (LAYERS.includes('policy')) config.policy = TEN_RULES_POLICY;
    const file = join(mkdtempSync(join(tmpdir(), 'swy-soak-')), 'config.json');
    writeFileSync(file, JSON.stringify(config));
    args.push('--config', file);
    if (LAYERS.includes('strict')) args.push('--strict');
    if (LAYERS.includes('tracing'))
      Object.assign(env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces', SWITCHYARD_TRACES_EXPORTER: 'drop' });
  }
  // The admin listener exists in builds that have it (for the active-handle count).
  const helpProc = start('help', process.execPath, [SWITCHYARD, '--help']);
  await helpProc.exited;
  const help = helpProc.tail();
  const hasAdmin = help.includes('--admin-port');
  if (hasAdmin) args.push('--admin-port', String(adminPort));
  /** An HTTP upstream's own process (sampled beside the gateway), with `--upstream http` or `sse`. */
  let server;
  if (UPSTREAM === 'stdio') args.push('--stdio', `${process.execPath} ${EVERYTHING} stdio`);
  else if (UPSTREAM !== 'demo') {
    const serverPort = await freePort();
    server = start('server-everything', process.execPath, [EVERYTHING, UPSTREAM === 'http' ? 'streamableHttp' : 'sse'], { env: { PORT: String(serverPort) } });
    const serverUrl = `http://127.0.0.1:${serverPort}/${UPSTREAM === 'http' ? 'mcp' : 'sse'}`;
    await waitFor(
      () =>
        request(`http://127.0.0.1:${serverPort}/`).then(
          async (r) => (await r.body.dump(), true),
          () => false,
        ),
      { timeoutMs: 30_000, what: 'server-everything', proc: server },
    );
    args.push('--upstream', serverUrl);
  }
  const gw = start('switchyard', process.execPath, args, { env });
  const url = `http://127.0.0.1:${port}/mcp`;
  const first = await principal();
  nextPrincipal = 0;
  await waitFor(
    async () =>
      await request(url, { method: 'POST', ...modernRequest('tools/list', 1), headers: { ...modernRequest('tools/list', 1).headers, ...first } })
        .then((r) => (r.body.dump(), r.statusCode === 200))
        .catch(() => false),
    { timeoutMs: 30_000, what: 'gateway', proc: gw },
  );
  log(
    `soak: ${MINUTES} min, ${RATE} req/s per era, upstream ${UPSTREAM === 'demo' ? 'the embedded demo' : `server-everything over ${UPSTREAM}`}, sampling every ${SAMPLE_MS / 1000} s${LAYERS.length ? `, layers ${LAYERS.join(',')}${jwt.issuer ? ` (${PRINCIPALS} principals)` : ''}` : ''}${hasAdmin ? '' : ' (no admin listener in this build: active handles not sampled)'}`,
  );
  const t0 = Date.now();
  const until = t0 + MINUTES * 60_000;
  const samples = [];
  const sample = async () => {
    samples.push({
      tS: (Date.now() - t0) / 1000,
      rssMiB: ownRssKib(gw.pid) / 1024,
      treeRssMiB: (treeRssKib(gw.pid) + (server ? treeRssKib(server.pid) : 0)) / 1024,
      fds: fds(gw.pid),
      handles: await handles(hasAdmin ? adminPort : 0),
      ...stats,
    });
    const s = samples[samples.length - 1];
    log(
      `soak: ${s.tS.toFixed(0)} s  rss ${s.rssMiB.toFixed(1)} MiB${UPSTREAM === 'demo' ? '' : ` (with the upstream ${s.treeRssMiB.toFixed(1)})`}  fds ${s.fds}  handles ${s.handles}  answered ${s.answered}/${s.sent}  lost ${s.lost}  misdelivered ${s.misdelivered}  sessions ${s.sessions}  errors ${s.errors}`,
    );
  };
  await sample();
  const timer = setInterval(() => void sample(), SAMPLE_MS);
  await Promise.all([modernLoop(url, until), sessionLoop(url, until), sseLoop(`http://127.0.0.1:${port}/sse`, until)]);
  clearInterval(timer);
  await sleep(2_000);
  await sample();
  await gw.stop();
  await server?.stop();

  const after = samples.filter((s) => s.tS * 1000 >= WARMUP_MS);
  const base = after[0] ?? samples[0];
  const last = samples[samples.length - 1];
  const growth = { rssMiB: last.rssMiB - base.rssMiB, fds: last.fds - base.fds, handles: last.handles - base.handles };
  const failures = [];
  if (growth.rssMiB > BOUNDS.rssMiB) failures.push(`RSS grew ${growth.rssMiB.toFixed(1)} MiB after the warm-up (bound ${BOUNDS.rssMiB})`);
  if (growth.fds > BOUNDS.fds) failures.push(`open fds grew ${growth.fds} (bound ${BOUNDS.fds})`);
  if (Number.isFinite(growth.handles) && growth.handles > BOUNDS.handles) failures.push(`active handles grew ${growth.handles} (bound ${BOUNDS.handles})`);
  if (stats.lost > 0) failures.push(`${stats.lost} replies lost`);
  if (stats.misdelivered > 0) failures.push(`${stats.misdelivered} replies misdelivered`);
  if (stats.errors > 0) failures.push(`${stats.errors} sessions could not be opened`);
  const dir = join(BENCH, 'results');
  mkdirSync(dir, { recursive: true });
  const result = {
    date: new Date().toISOString(),
    minutes: MINUTES,
    ratePerEra: RATE,
    upstream: UPSTREAM,
    layers: LAYERS,
    ...(jwt.issuer ? { principals: PRINCIPALS } : {}),
    bounds: BOUNDS,
    warmupS: WARMUP_MS / 1000,
    growth,
    stats,
    samples,
    failures,
  };
  writeFileSync(join(dir, 'soak.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(dir, 'soak.svg'), svg(samples));
  log(`soak: ${failures.length === 0 ? 'passed' : `FAILED: ${failures.join('; ')}`}; bench/results/soak.json, bench/results/soak.svg`);
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    killAllNow();
    process.exit(code);
  },
  (err) => {
    process.stderr.write(`soak: ${err?.stack ?? err}\n`);
    killAllNow();
    process.exit(1);
  },
);
