#!/usr/bin/env node
// Where each layer's time goes, within one process: starts the demo gateway bare and with each
// named layer (jwt, policy, metrics, tracing, strict), every one under `node --cpu-prof`, drives
// each with the 2026-07-28 tools/call load for the same time, stops them (SIGTERM writes the
// profile) and prints the main thread's self time per request over the timed window, grouped by package or file, one
// column per gateway. A layer's own code shows in rows that are zero in the bare column; rows that
// every column shares move with the machine's speed, which this VM changes between seconds, so
// read a layer's price from its own rows as a share of the rest of its column (printed), not from
// the TOTAL difference. The share leaves out what a layer adds to shared code (GC above all).
//
//   node bench/layer-profile.mjs [jwt,policy,metrics,tracing,strict,all,metrics+tracing,…] [--seconds N] [--top N] [--by file|function]
//
// Loopback only, bounded in time; every process it starts is stopped by it.

import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { freePort, installCleanup, start, waitFor } from './lib/procs.mjs';
import { expectOf, modernRequest, probe } from './lib/mcp.mjs';
import { cannon } from './lib/load.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const SY_ROOT = process.env.SWITCHYARD_ROOT ? resolve(process.env.SWITCHYARD_ROOT) : ROOT;
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const KNOWN = ['jwt', 'policy', 'metrics', 'tracing', 'strict', 'all'];
/** What a member turns on: its own layers (`metrics+tracing` is both), or every layer (`all`, as the bench's `+all` row). */
const has = (layer, what) => layer !== undefined && (layer.split('+').includes(what) || (layer === 'all' && what !== 'all'));
const wanted = (argv.find((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--')) ?? KNOWN.filter((l) => l !== 'all').join(',')).split(',');
for (const l of wanted.flatMap((w) => w.split('+'))) if (!KNOWN.includes(l)) throw new Error(`unknown layer ${l} (known: ${KNOWN.join(', ')})`);
const seconds = Number(opt('--seconds', 6));
const top = Number(opt('--top', 25));
const by = opt('--by', 'file');

installCleanup();
setTimeout(
  () => {
    process.stderr.write('layer-profile: over the time bound\n');
    process.exit(1);
  },
  ((seconds + 3) * (wanted.length + 1) + 60) * 1000,
).unref();

async function helper(name) {
  const port = await freePort();
  const proc = start(name, process.execPath, [join(BENCH, 'servers', `${name}.mjs`), String(port)]);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    () =>
      request(`${url}/`).then(
        async (r) => (await r.body.dump(), true),
        () => false,
      ),
    { timeoutMs: 10_000, everyMs: 20, what: name, proc },
  );
  return { proc, url };
}

// The same layers as bench/run.mjs's layer rows.
const RULES = Array.from({ length: 10 }, (_, i) => ({
  name: `deny-tool-${i}`,
  effect: 'deny',
  when: `component.kind == 'tool' && component.name == 'not-a-demo-tool-${i}' && request.method == 'tools/call'`,
}));
const issuer = wanted.some((l) => has(l, 'jwt')) ? await helper('issuer') : undefined;
const work = mkdtempSync(join(tmpdir(), 'swy-layer-prof-'));

/** Profiles one gateway: the bare demo (`layer` undefined) or the demo with one layer. */
async function profileOne(layer) {
  const id = layer ?? 'bare';
  const config = {};
  if (has(layer, 'jwt')) config.auth = { bearer: { issuer: issuer.url } };
  if (has(layer, 'policy')) config.policy = { default: 'allow', rules: RULES };
  const file = join(work, `${id}.json`);
  writeFileSync(file, JSON.stringify(config));
  const dir = join(work, id);
  const port = await freePort();
  const args = [
    '--cpu-prof',
    '--cpu-prof-dir',
    dir,
    join(SY_ROOT, 'dist', 'src', 'cli', 'main.js'),
    '--config',
    file,
    '--port',
    String(port),
    '--log-level',
    'warn',
  ];
  args.push(...(has(layer, 'metrics') ? ['--admin-port', '0'] : ['--no-admin']), ...(has(layer, 'strict') ? ['--strict'] : []));
  const env = has(layer, 'tracing') ? { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces', SWITCHYARD_TRACES_EXPORTER: 'drop' } : {};
  const proc = start(id, process.execPath, args, { env });
  const url = `http://127.0.0.1:${port}/mcp`;
  const req = modernRequest('tools/call');
  if (has(layer, 'jwt')) {
    const r = await request(`${issuer.url}/token?aud=${encodeURIComponent(url)}`);
    req.headers = { ...req.headers, authorization: `Bearer ${(await r.body.json()).access_token}` };
  }
  await waitFor(() => probe(url, 'tools/call', req, 'first').catch(() => false), { timeoutMs: 15_000, everyMs: 20, proc, what: id });
  const load = (s) => cannon({ url, headers: req.headers, body: req.body, connections: 16, seconds: s, expect: expectOf('tools/call') });
  await load(1);
  // Only the timed window's samples count (start-up, module loading and warm-up left out): V8's
  // profile clock and process.hrtime are both CLOCK_MONOTONIC, in µs and ns.
  const t0 = Number(process.hrtime.bigint() / 1000n);
  const r = await load(seconds);
  const t1 = Number(process.hrtime.bigint() / 1000n);
  const n = r.ok;
  if (r.bad) process.stderr.write(`layer-profile: ${id}: ${r.bad} failed requests\n`);
  await proc.stop();
  return { id, n, window: [t0, t1], profile: JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8')) };
}

/** Main-thread self µs per request by group; idle and (program) are left out. */
function perRequest({ id, profile, n, window: [t0, t1] }) {
  const byId = new Map(profile.nodes.map((x) => [x.id, x]));
  const out = new Map();
  let total = 0;
  let at = profile.startTime;
  const inWindow = profile.startTime <= t0 && profile.endTime >= t1;
  if (!inWindow) process.stderr.write(`layer-profile: ${id}: the profile's clock does not cover the timed window; counting the whole profile\n`);
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (inWindow && (at < t0 || at > t1)) continue;
    const cf = byId.get(profile.samples[i]).callFrame;
    if (cf.functionName === '(idle)' || cf.functionName === '(program)') continue;
    const dt = profile.timeDeltas[i] ?? 0;
    const url = cf.url.replace(/^.*\/node_modules\//, 'node_modules/').replace(/^.*\/dist\//, '');
    let key;
    if (by === 'function') key = `${cf.functionName || '(anonymous)'} ${url}:${cf.lineNumber + 1}`;
    else if (url.startsWith('node_modules/')) {
      const parts = url.split('/');
      key = parts.slice(0, parts[1].startsWith('@') ? 3 : 2).join('/');
    } else key = url || cf.functionName;
    out.set(key, (out.get(key) ?? 0) + dt);
    total += dt;
  }
  out.set('TOTAL', total);
  return new Map([...out].map(([k, v]) => [k, v / n]));
}

const runs = [];
for (const layer of [undefined, ...wanted]) runs.push(await profileOne(layer));
for (const h of [issuer]) await h?.proc.stop();
const cols = runs.map((r) => [r.id, perRequest(r)]);
const keys = new Set(cols.flatMap(([, m]) => [...m.keys()]));
keys.delete('TOTAL');
const bare = cols[0][1];
// Rows a layer adds (zero in the bare column) first, by their largest value; then the shared rows.
const rows = [...keys].map((k) => [k, cols.map(([, m]) => m.get(k) ?? 0)]);
const own = rows.filter(([k]) => !bare.has(k)).sort((a, b) => Math.max(...b[1]) - Math.max(...a[1]));
const shared = rows.filter(([k]) => bare.has(k)).sort((a, b) => Math.max(...b[1]) - Math.max(...a[1]));
const line = (k, vs) => console.log(k.slice(0, 64).padEnd(64), vs.map((v) => v.toFixed(1).padStart(9)).join(''));
console.log(`main-thread self µs per request (${seconds} s of 2026-07-28 tools/call each, 16 connections)`);
console.log(''.padEnd(64), cols.map(([id]) => id.padStart(9)).join(''));
line(
  'TOTAL',
  cols.map(([, m]) => m.get('TOTAL')),
);
console.log('requests timed'.padEnd(64), runs.map((r) => String(r.n).padStart(9)).join(''));
console.log('-- only with a layer');
for (const [k, vs] of own.slice(0, top)) line(k, vs);
const ownSum = cols.map((_, i) => own.reduce((a, [, vs]) => a + vs[i], 0));
line('sum of the above', ownSum);
// Both parts of a column scale with the machine's speed of the moment; their ratio does not.
line(
  '  as % of the rest of its column',
  ownSum.map((v, i) => (100 * v) / (cols[i][1].get('TOTAL') - v)),
);
console.log('-- shared');
for (const [k, vs] of shared.slice(0, top)) line(k, vs);
process.exit(0);
