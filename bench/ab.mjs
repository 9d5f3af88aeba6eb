#!/usr/bin/env node
// Two builds side by side on one path: starts the demo gateway of each `--root` (a checkout with
// its `dist/` built; default: this tree), warms both, then runs paired rounds of the same
// 2026-07-28 load (A then B, the order reversed every round), and prints each build's median
// req/s, server CPU µs per request and the load generator's context switches per request (how
// often this process slept and was woken), and the median of the per-round ratios B/A. Pairing cancels
// most of this VM's drift between seconds; read the ratio with its range.
//
//   node bench/ab.mjs --root A --root B [--path call|list] [--rounds 7] [--seconds 2] [--connections 16]
//
// Loopback only, bounded in time; every process it starts is stopped by it.

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, installCleanup, start, treeCpuUs, waitFor } from './lib/procs.mjs';
import { expectOf, modernRequest, probe } from './lib/mcp.mjs';
import { cannon, median } from './lib/load.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const roots = argv.flatMap((a, i) => (a === '--root' ? [resolve(argv[i + 1])] : []));
while (roots.length < 2) roots.push(ROOT);
const kind = opt('--path', 'call') === 'list' ? 'tools/list' : 'tools/call';
const rounds = Number(opt('--rounds', 7));
const seconds = Number(opt('--seconds', 2));
const connections = Number(opt('--connections', 16));

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
  (rounds * 2 * (seconds + 1) + 90) * 1000,
).unref();

const req = modernRequest(kind);
const gateways = [];
for (const [i, root] of roots.slice(0, 2).entries()) {
  const port = await freePort();
  const proc = start(`build-${'AB'[i]}`, process.execPath, [
    join(root, 'dist', 'src', 'cli', 'main.js'),
    '--port',
    String(port),
    '--no-admin',
    '--log-level',
    'warn',
  ]);
  const url = `http://127.0.0.1:${port}/mcp`;
  await waitFor(() => probe(url, kind, req, 'first').catch(() => false), { timeoutMs: 20_000, proc, what: root });
  gateways.push({ name: 'AB'[i], root, proc, url, rps: [], cpu: [], wakes: [] });
}
const load = (g, s) => cannon({ url: g.url, headers: req.headers, body: req.body, connections, seconds: s, expect: expectOf(kind) });
for (const g of gateways) await load(g, 3);

const ratios = { rps: [], cpu: [] };
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? gateways : [...gateways].reverse();
  for (const g of order) {
    await load(g, 1);
    const c0 = treeCpuUs(g.proc.pid);
    const w0 = switches();
    const out = await load(g, seconds);
    const cpu = (treeCpuUs(g.proc.pid) - c0) / Math.max(1, out.ok);
    g.wakes.push((switches() - w0) / Math.max(1, out.ok));
    if (out.bad) process.stderr.write(`ab: ${g.name}: ${out.bad} failed requests\n`);
    g.rps.push(out.rps);
    g.cpu.push(cpu);
  }
  const [a, b] = gateways;
  ratios.rps.push(b.rps[r] / a.rps[r]);
  ratios.cpu.push(b.cpu[r] / a.cpu[r]);
}
for (const g of gateways) {
  process.stdout.write(
    `${g.name} ${g.root}: ${kind} median ${Math.round(median(g.rps))} req/s, ${median(g.cpu).toFixed(1)} µs CPU/request, load generator ${median(g.wakes).toFixed(3)} context switches/request\n`,
  );
  await g.proc.stop();
}
const range = (xs) => `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`;
process.stdout.write(`B/A req/s: median ${median(ratios.rps).toFixed(3)} (rounds ${range(ratios.rps)})\n`);
process.stdout.write(`B/A CPU per request: median ${median(ratios.cpu).toFixed(3)} (rounds ${range(ratios.cpu)})\n`);
