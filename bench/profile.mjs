#!/usr/bin/env node
// CPU profile of Switchyard on one bench path: starts the gateway with `node --cpu-prof`,
// drives it with autocannon (or the SSE client), stops it with SIGINT so the profile is
// written, and prints the functions and files with the most self time.
//
//   node bench/profile.mjs [modern-call|modern-list|session-call|sse-call|startup] [--stdio] [--seconds N]
//
// Loopback only, bounded in time; the gateway is stopped by this script.

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, installCleanup, start, waitFor } from './lib/procs.mjs';
import { modernRequest, openSession, probe, sessionRequest, expectOf } from './lib/mcp.mjs';
import { cannon, openLegacySessions, sseLoad } from './lib/load.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const SY_ROOT = process.env.SWITCHYARD_ROOT ? resolve(process.env.SWITCHYARD_ROOT) : ROOT;
const EVERYTHING = join(BENCH, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const argv = process.argv.slice(2);
const what = argv.find((a) => !a.startsWith('--')) ?? 'modern-call';
const stdio = argv.includes('--stdio');
const seconds = Number(argv[argv.indexOf('--seconds') + 1]) || 5;
const top = Number(argv[argv.indexOf('--top') + 1]) || 25;

installCleanup();
setTimeout(
  () => {
    process.stderr.write('profile: over the time bound\n');
    process.exit(1);
  },
  (seconds + 60) * 1000,
).unref();

const dir = mkdtempSync(join(tmpdir(), 'swy-prof-'));
const port = await freePort();
const args = [
  '--cpu-prof',
  '--cpu-prof-dir',
  dir,
  join(SY_ROOT, 'dist', 'src', 'cli', 'main.js'),
  '--port',
  String(port),
  '--legacy-sse',
  '--log-level',
  'warn',
];
if (process.env.SY_FLAGS) args.push(...process.env.SY_FLAGS.split(' '));
if (stdio) args.push('--stdio', `${process.execPath} ${EVERYTHING} stdio`);
const proc = start('switchyard', process.execPath, args);
const url = `http://127.0.0.1:${port}/mcp`;
await waitFor(() => probe(url, 'tools/list', modernRequest('tools/list'), 'first').catch(() => false), { everyMs: 5, proc, what: 'first answer' });

if (what !== 'startup') {
  const kind = what.endsWith('list') ? 'tools/list' : 'tools/call';
  if (what.startsWith('sse')) {
    const sessions = await openLegacySessions(`http://127.0.0.1:${port}/sse`, 32);
    const r = await sseLoad({ kind, params: kind === 'tools/call' ? { name: 'echo', arguments: { message: 'x'.repeat(100) } } : {}, seconds, sessions });
    await sessions.close();
    process.stderr.write(`load: ${r.rps.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(2)} ms\n`);
  } else {
    const req = what.startsWith('session') ? sessionRequest(kind, await openSession(url)) : modernRequest(kind);
    const r = await cannon({ url, ...req, connections: 32, seconds, expect: expectOf(kind) });
    process.stderr.write(`load: ${r.rps.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, ${r.bad} failed, ${r.ok} ok\n`);
  }
}
proc.child.kill('SIGINT');
await proc.exited;
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile written in ${dir}`);
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));

// self time per node, from samples × time deltas
const self = new Map();
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const label = (cf) => {
  const f = cf.url ? cf.url.replace(/^file:\/\//, '') : '';
  const short = f.includes('/node_modules/') ? f.slice(f.lastIndexOf('/node_modules/') + 14) : f.startsWith(SY_ROOT) ? relative(SY_ROOT, f) : f || '(native)';
  return { fn: cf.functionName || '(anonymous)', file: short, line: cf.lineNumber + 1 };
};
const fnTotals = new Map();
const fileTotals = new Map();
for (const [id, us] of self) {
  const n = byId.get(id);
  const l = label(n.callFrame);
  const k = `${l.fn} ${l.file}:${l.line}`;
  fnTotals.set(k, (fnTotals.get(k) ?? 0) + us);
  const group = l.file.startsWith('dist/')
    ? l.file
    : l.file.includes('/')
      ? l.file.split('/')[0].replace(/^@.*/, l.file.split('/').slice(0, 2).join('/'))
      : l.file;
  fileTotals.set(group, (fileTotals.get(group) ?? 0) + us);
}
const pct = (us) => `${((100 * us) / total).toFixed(1)}%`.padStart(6);
console.log(`profile: ${what}${stdio ? ' (stdio everything)' : ' (demo)'}, ${(total / 1e6).toFixed(2)} s of samples, ${join(dir, file)}`);
console.log('\nself time by function:');
for (const [k, us] of [...fnTotals].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
console.log('\nself time by package / file:');
for (const [k, us] of [...fileTotals].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
