#!/usr/bin/env node
// Two builds side by side on one path: starts the demo gateway of each `--root` (a checkout with
// its `dist/` built; default: this tree), warms both, then runs paired rounds of the same
// 2026-07-28 load (or, with `--path sse`, 2024-11-05 HTTP+SSE tools/call round trips; A then B, the order reversed every round), and prints each build's median
// req/s, server CPU µs per request and the load generator's context switches per request (how
// often this process slept and was woken), and the median of the per-round ratios B/A. Pairing cancels
// most of this VM's drift between seconds; read the ratio with its range.
// `--layers` runs both builds with the same layers on, as bench/run.mjs's layer rows set them up
// (jwt: a bench issuer's token; policy: ten rules; metrics: the admin listener; tracing: the drop
// exporter; strict; `all` for every one). `--alloc` also counts the bytes each build allocates on
// its JS heap per request in every timed run (bench/lib/alloc-preload.cjs: V8's own GC
// statistics, which other processes on the machine do not move) and prints their medians.
//
//   node bench/ab.mjs --root A --root B [--path call|list|sse] [--everything] [--before call,list,session-call,session-list] [--rounds 7] [--seconds 2] [--connections 16]
//                     [--layers jwt,policy,metrics,tracing,strict|all] [--layers-b …] [--alloc]
//                     [--node-a "FLAGS"] [--node-b "FLAGS"] [--gateway-flags "FLAGS"]
//
// `--everything` puts server-everything (stdio) behind both instead of the demo; `--before` gives both
// the loads bench/run.mjs's group runs before a row, in one process, first (see its docstring).
// `--layers-b` turns layers on in B alone: with one root (both builds this tree) B/A is those
// layers' price, paired as bench/run.mjs's layer group pairs them with its baseline.
// `--node-a` / `--node-b` give one build's node process extra V8/node flags (space-separated, e.g.
// "--max-semi-space-size=32"): with one root, B/A is those flags' effect. `--gateway-flags` gives
// both gateways extra Switchyard flags (e.g. the bounds bench/run.mjs raises for its load rows).
//
// Loopback only, bounded in time; every process it starts is stopped by it.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { freePort, installCleanup, start, treeCpuUs, waitFor } from './lib/procs.mjs';
import { TEN_RULES_POLICY } from './lib/layers.mjs';
import { expectOf, modernRequest, openSession, paramsOf, probe, sessionRequest } from './lib/mcp.mjs';
import { cannon, median, openLegacySessions, sseLoad } from './lib/load.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const roots = argv.flatMap((a, i) => (a === '--root' ? [resolve(argv[i + 1])] : []));
while (roots.length < 2) roots.push(ROOT);
const path = opt('--path', 'call');
if (!['call', 'list', 'sse'].includes(path)) throw new Error(`unknown --path ${path} (known: call, list, sse)`);
/** `sse`: a 2024-11-05 HTTP+SSE tools/call round trip on `connections` sessions opened before the clock (bench/run.mjs's HTTP+SSE demo row). */
const legacy = path === 'sse';
const kind = path === 'list' ? 'tools/list' : 'tools/call';
const rounds = Number(opt('--rounds', 7));
const seconds = Number(opt('--seconds', 2));
const connections = Number(opt('--connections', 16));
const KNOWN = ['jwt', 'policy', 'metrics', 'tracing', 'strict'];
const layerList = (flag) =>
  opt(flag, '') === 'all'
    ? KNOWN
    : opt(flag, '')
        .split(',')
        .filter((l) => l !== '');
const shared = layerList('--layers');
/** Each build's layers: `--layers` for both, and `--layers-b` for B alone (a layer's price against a bare A of the same tree). */
const layersOf = [shared, [...new Set([...shared, ...layerList('--layers-b')])]];
const layers = layersOf[1];
for (const l of layers) if (!KNOWN.includes(l)) throw new Error(`unknown layer ${l} (known: ${KNOWN.join(', ')}, or all)`);
if (legacy && layers.includes('jwt')) throw new Error('--path sse runs without the jwt layer (its sessions are opened without a token)');
const alloc = argv.includes('--alloc');
/** `--everything`: both gateways front server-everything over stdio (bench/run.mjs's "everything/stdio" rows) instead of the demo. */
const everything = argv.includes('--everything');
const EVERYTHING = join(dirname(fileURLToPath(import.meta.url)), 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
/**
 * `--before call,list,session-call,session-list`: loads each build takes, 6 s each and in this
 * order, before the warm-up (bench/run.mjs's demo group runs its rows in one process in this
 * order): `call`/`list` the 2026-07-28 request, `session-…` the same in a 2025 session.
 */
const BEFORE = ['call', 'list', 'session-call', 'session-list'];
const before = opt('--before', '')
  .split(',')
  .filter((p) => p !== '');
for (const p of before) if (!BEFORE.includes(p)) throw new Error(`unknown --before load ${p} (known: ${BEFORE.join(', ')})`);
/** Extra Switchyard flags for both builds' gateways (`--gateway-flags "…"`, space-separated; e.g. bench/run.mjs's own). */
const gatewayFlags = opt('--gateway-flags', '')
  .split(' ')
  .filter((x) => x !== '');
/** Extra node flags for each build's process (`--node-a`, `--node-b`). */
const nodeFlagsOf = [opt('--node-a', ''), opt('--node-b', '')].map((f) => f.split(' ').filter((x) => x !== ''));
const BENCH = dirname(fileURLToPath(import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'swy-ab-'));

installCleanup();

/** This process's context switches so far, voluntary and not (proc(5) /proc/PID/status). */
function switches() {
  const s = readFileSync('/proc/self/status', 'utf8');
  return Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(s)?.[1] ?? 0) + Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(s)?.[1] ?? 0);
}
setTimeout(
  () => {
    process.stderr.write('ab: over the time bound\n');
    process.exit(1);
  },
  (rounds * 2 * (seconds + 1) + before.length * 2 * 7 + 90) * 1000,
).unref();

/** A bench helper process (bench/servers/NAME.mjs) on a free loopback port, once it answers. */
async function helper(name) {
  const port = await freePort();
  const proc = start(name, process.execPath, [join(BENCH, 'servers', `${name}.mjs`), String(port)]);
  const url = `http://127.0.0.1:${port}`;
  const up = () =>
    request(`${url}/`).then(
      async (r) => (await r.body.dump(), true),
      () => false,
    );
  await waitFor(up, { timeoutMs: 10_000, everyMs: 20, what: name, proc });
  return { proc, url };
}
const issuer = layers.includes('jwt') ? await helper('issuer') : undefined;
/** The same layers as bench/run.mjs's layer rows (ten rules that every tools/call evaluates and none matches), as a config file. */
function configFileOf(name, on) {
  const config = {};
  if (everything) config.upstreams = { default: { command: process.execPath, args: [EVERYTHING, 'stdio'] } };
  if (on.includes('jwt')) config.auth = { bearer: { issuer: issuer.url } };
  if (on.includes('policy')) config.policy = TEN_RULES_POLICY;
  const file = join(work, `config-${name}.json`);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

const gateways = [];
for (const [i, root] of roots.slice(0, 2).entries()) {
  const name = 'AB'[i];
  const layers = layersOf[i];
  const configFile = configFileOf(name, layers);
  const port = await freePort();
  const allocFile = join(work, `alloc-${name}.jsonl`);
  const env = {
    ...(layers.includes('tracing') ? { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces', SWITCHYARD_TRACES_EXPORTER: 'drop' } : {}),
    ...(alloc ? { SWITCHYARD_ALLOC_FILE: allocFile } : {}),
  };
  const proc = start(
    `build-${name}`,
    process.execPath,
    [
      ...nodeFlagsOf[i],
      ...(alloc ? ['--require', join(BENCH, 'lib', 'alloc-preload.cjs')] : []),
      join(root, 'dist', 'src', 'cli', 'main.js'),
      '--config',
      configFile,
      '--port',
      String(port),
      ...(layers.includes('metrics') ? ['--admin-port', '0'] : ['--no-admin']),
      ...gatewayFlags,
      ...(legacy ? ['--legacy-sse'] : []),
      ...(layers.includes('strict') ? ['--strict'] : []),
      '--log-level',
      'warn',
    ],
    { env },
  );
  // A configured upstream is mounted under its name.
  const base = `http://127.0.0.1:${port}${everything ? '/default' : ''}`;
  const url = `${base}/mcp`;
  const req = modernRequest(kind);
  if (layers.includes('jwt')) {
    const r = await request(`${issuer.url}/token?aud=${encodeURIComponent(url)}`);
    req.headers = { ...req.headers, authorization: `Bearer ${(await r.body.json()).access_token}` };
  }
  await waitFor(() => probe(url, kind, req, 'first').catch(() => false), { timeoutMs: 20_000, proc, what: root });
  const sessions = legacy ? await openLegacySessions(`${base}/sse`, connections) : undefined;
  gateways.push({ name, root, layers, proc, url, req, sessions, allocFile, marks: 0, rps: [], cpu: [], wakes: [], bytes: [] });
}
const load = (g, s) =>
  g.sessions
    ? sseLoad({ kind, params: paramsOf(kind), seconds: s, sessions: g.sessions })
    : cannon({ url: g.url, headers: g.req.headers, body: g.req.body, connections, seconds: s, expect: expectOf(kind) });
/** Marks the allocation window in `g` (bench/lib/alloc-preload.cjs); the closing mark resolves to the bytes allocated since the opening one. */
async function mark(g) {
  process.kill(g.proc.pid, 'SIGUSR2');
  if (g.marks++ % 2 === 0) return new Promise((r) => setTimeout(r, 50));
  const lines = () => readFileSync(g.allocFile, 'utf8').split('\n').filter(Boolean);
  const want = g.marks / 2;
  await waitFor(
    () => {
      try {
        return lines().length >= want;
      } catch {
        return false;
      }
    },
    { timeoutMs: 10_000, what: `allocation count of ${g.name}`, proc: g.proc },
  );
  return JSON.parse(lines()[want - 1]).allocatedBytes;
}
for (const p of before)
  for (const g of gateways) {
    const k = p.endsWith('list') ? 'tools/list' : 'tools/call';
    const req = p.startsWith('session-') ? sessionRequest(k, await openSession(g.url)) : modernRequest(k);
    if (g.req.headers.authorization) req.headers = { ...req.headers, authorization: g.req.headers.authorization };
    await cannon({ url: g.url, headers: req.headers, body: req.body, connections, seconds: 6, expect: expectOf(k) });
  }
for (const g of gateways) await load(g, 3);

const ratios = { rps: [], cpu: [], bytes: [] };
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? gateways : [...gateways].reverse();
  for (const g of order) {
    await load(g, 1);
    if (alloc) await mark(g);
    const c0 = treeCpuUs(g.proc.pid);
    const w0 = switches();
    const out = await load(g, seconds);
    const cpu = (treeCpuUs(g.proc.pid) - c0) / Math.max(1, out.ok);
    if (alloc) g.bytes.push((await mark(g)) / Math.max(1, out.ok));
    g.wakes.push((switches() - w0) / Math.max(1, out.ok));
    if (out.bad) process.stderr.write(`ab: ${g.name}: ${out.bad} failed requests\n`);
    g.rps.push(out.rps);
    g.cpu.push(cpu);
  }
  const [a, b] = gateways;
  ratios.rps.push(b.rps[r] / a.rps[r]);
  ratios.cpu.push(b.cpu[r] / a.cpu[r]);
  if (alloc) ratios.bytes.push(b.bytes[r] / a.bytes[r]);
}
for (const g of gateways) {
  process.stdout.write(
    `${g.name} ${g.root}: ${legacy ? '2024-11-05 HTTP+SSE ' : ''}${kind}${g.layers.length ? ` (layers ${g.layers.join(',')})` : ''} median ${Math.round(median(g.rps))} req/s, ${median(g.cpu).toFixed(1)} µs CPU/request, load generator ${median(g.wakes).toFixed(3)} context switches/request${alloc ? `, ${Math.round(median(g.bytes))} B allocated/request (rounds ${Math.round(Math.min(...g.bytes))}–${Math.round(Math.max(...g.bytes))})` : ''}\n`,
  );
  await g.sessions?.close();
  await g.proc.stop();
}
const range = (xs) => `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`;
process.stdout.write(`B/A req/s: median ${median(ratios.rps).toFixed(3)} (rounds ${range(ratios.rps)})\n`);
process.stdout.write(`B/A CPU per request: median ${median(ratios.cpu).toFixed(3)} (rounds ${range(ratios.cpu)})\n`);
if (alloc) process.stdout.write(`B/A bytes allocated per request: median ${median(ratios.bytes).toFixed(3)} (rounds ${range(ratios.bytes)})\n`);
await issuer?.proc.stop();
rmSync(work, { recursive: true, force: true });
