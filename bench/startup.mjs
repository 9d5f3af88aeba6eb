#!/usr/bin/env node
// Start-up time of the CLI: spawn → first answered 2026-07-28 `tools/list`, the median of N fresh
// processes, and (with --imports) the packages and files each start loaded. Node built-ins only,
// so it runs without `npm ci --prefix bench`.
//
//   node bench/startup.mjs [--runs 7] [--root DIR]... [--imports [--list]] [--cpu-prof DIR] [-- extra switchyard flags]
//
// DIR is a checkout with a built dist/ (default: this one; SWITCHYARD_ROOT works too); with
// several --root, their runs alternate (one start of each in turn), so that a busy machine weighs
// on all alike. Beside wall time it reports the CPU time the gateway used by its first answer
// (user + system, from /proc; Linux only), which depends less on what else the machine runs. The
// gateway runs the embedded demo on a loopback port picked by the OS, with `--no-admin --log-level
// warn` unless the extra flags say otherwise; each process is stopped before the next starts.
// --imports counts the files each start loaded, by package (--list names them); --cpu-prof
// writes each start's CPU profile into DIR (the gateway exits on SIGTERM, which writes it).

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BENCH = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash === -1 ? argv : argv.slice(0, dash);
const extra = dash === -1 ? ['--no-admin', '--log-level', 'warn'] : argv.slice(dash + 1);
const valueOf = (name) => (own.includes(name) ? own[own.indexOf(name) + 1] : undefined);
const runs = Number(valueOf('--runs') ?? 7);
const rootArgs = own.flatMap((a, i) => (a === '--root' && own[i + 1] !== undefined ? [own[i + 1]] : []));
const roots = (rootArgs.length > 0 ? rootArgs : [process.env.SWITCHYARD_ROOT ?? join(BENCH, '..')]).map((r) => resolve(r));
const imports = own.includes('--imports');
const cpuProf = valueOf('--cpu-prof');
/** A start that takes longer than this is a failure, not a figure. */
const START_BOUND_MS = 30_000;

const dir = mkdtempSync(join(tmpdir(), 'swy-startup-'));
// The module hooks run on their own thread: each loaded URL is appended to a file named by the environment.
const hooks = join(dir, 'hooks.mjs');
writeFileSync(
  hooks,
  `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(process.env.SWY_STARTUP_LOADED, url + '\\n');
  return next(url, context);
}
`,
);
const preload = join(dir, 'preload.mjs');
writeFileSync(preload, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);

const REQUEST = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/list',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'switchyard-startup', version: '1.0.0' },
    },
  },
});

/** CPU time of a live process so far, ms (utime + stime of /proc/PID/stat); undefined where there is no /proc. */
function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/** One fresh process of `root`: ms from spawn to the first tools/list answer, its CPU ms by then, and the files it loaded. */
function once(root, i) {
  const MAIN = join(root, 'dist', 'src', 'cli', 'main.js');
  const loaded = join(dir, `loaded-${i}.txt`);
  writeFileSync(loaded, '');
  const nodeArgs = [...(imports ? ['--import', pathToFileURL(preload).href] : []), ...(cpuProf ? ['--cpu-prof', '--cpu-prof-dir', resolve(cpuProf)] : [])];
  return new Promise((resolvePromise, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, [...nodeArgs, MAIN, '--port', '0', ...extra], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SWY_STARTUP_LOADED: loaded },
    });
    const bound = setTimeout(() => fail(new Error(`no answer within ${START_BOUND_MS} ms`)), START_BOUND_MS);
    let err = '';
    let done = false;
    const fail = (e) => {
      if (done) return;
      done = true;
      clearTimeout(bound);
      child.kill('SIGKILL');
      reject(new Error(`${e.message}\n${err.slice(-2000)}`));
    };
    child.on('exit', (code) => fail(new Error(`exited with ${code} before answering`)));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      if (err.length < 65_536) err += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (!m || done) return;
      done = true;
      fetch(m[1], {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/list',
        },
        body: REQUEST,
      })
        .then(async (res) => {
          const body = await res.text();
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          const cpuMs = cpuMsOf(child.pid);
          clearTimeout(bound);
          child.removeAllListeners('exit');
          child.once('exit', () => resolvePromise({ ms, cpuMs, files: readFileSync(loaded, 'utf8').split('\n').filter(Boolean) }));
          child.kill('SIGTERM');
          if (res.status !== 200 || !body.includes('"tools"')) reject(new Error(`first answer was ${res.status}: ${body.slice(0, 200)}`));
        })
        .catch((e) => {
          done = false;
          fail(e);
        });
    });
  });
}

/** The package a file belongs to (`redis`, `@opentelemetry/api`), or `switchyard` for ours. */
function packageOf(url) {
  const p = fileURLToPath(url);
  const at = p.lastIndexOf('/node_modules/');
  if (at === -1) return 'switchyard';
  const parts = p.slice(at + 14).split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

const results = roots.map(() => ({ times: [], cpu: [], files: [] }));
try {
  for (let i = 0; i < runs; i++) {
    for (const [k, root] of roots.entries()) {
      const r = await once(root, `${k}-${i}`);
      results[k].times.push(r.ms);
      if (r.cpuMs !== undefined) results[k].cpu.push(r.cpuMs);
      results[k].files = r.files;
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const medianOf = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`start → first 2026-07-28 tools/list, ${runs} runs${roots.length > 1 ? ' each, alternating' : ''}, flags: ${extra.join(' ')}`);
for (const [k, root] of roots.entries()) {
  const { times, cpu, files } = results[k];
  const sorted = [...times].sort((a, b) => a - b);
  if (roots.length > 1) console.log(`\n${root}`);
  console.log(`runs (ms): ${times.map((t) => t.toFixed(0)).join(' ')}`);
  console.log(`median: ${medianOf(times).toFixed(0)} ms (min ${sorted[0].toFixed(0)}, max ${sorted.at(-1).toFixed(0)})`);
  if (cpu.length > 0) console.log(`CPU by the first answer: median ${medianOf(cpu).toFixed(0)} ms (runs: ${cpu.map((c) => c.toFixed(0)).join(' ')})`);
  if (imports) {
    const byPackage = new Map();
    for (const f of files) byPackage.set(packageOf(f), (byPackage.get(packageOf(f)) ?? 0) + 1);
    console.log(`files loaded by the first answer: ${files.length}`);
    if (own.includes('--list')) for (const f of files) console.log(`  ${f.replace(pathToFileURL(root).href + '/', '')}`);
    for (const [p, n] of [...byPackage].sort((a, b) => b[1] - a[1])) console.log(`${String(n).padStart(5)}  ${p}`);
  }
}
