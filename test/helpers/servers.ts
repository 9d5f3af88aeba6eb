// Test helper: real MCP servers as child processes on 127.0.0.1 (server-everything's HTTP
// modes, the 2026-07-28 fixture), stopped by the test's teardown.

import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { NO_COVERAGE_ENV, REPO_ROOT } from './gateway.js';

const require = createRequire(import.meta.url);

/** A running server. */
export interface TestServer {
  url: string;
  child: ChildProcess;
}

/** A TCP port on 127.0.0.1 that was free a moment ago (bound, read back, closed). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function waitFor(child: ChildProcess, re: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`${what} did not start: ${out}`)), 20_000);
    const on = (d: Buffer) => {
      out += d.toString();
      const m = re.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m);
      }
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    child.on('exit', (code) => reject(new Error(`${what} exited ${code}: ${out}`)));
  });
}

/**
 * Starts server-everything in `sse` (2024-11-05) or `streamableHttp` (2025) mode, bound to loopback.
 * `paceMs` (optional) replaces the 5000 ms period of its simulated logging and resource updates
 * (test/fixtures/everything-pace-preload.cjs), so that a test waiting for several of them does
 * not wait 5 s for each.
 */
export async function everythingHttp(
  t: { after(fn: () => void | Promise<void>): void },
  mode: 'sse' | 'streamableHttp',
  opts: { paceMs?: number } = {},
): Promise<TestServer> {
  const port = await freePort();
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const preloads = ['loopback-preload.cjs', ...(opts.paceMs === undefined ? [] : ['everything-pace-preload.cjs'])];
  const child = spawn(process.execPath, [...preloads.flatMap((p) => ['--require', path.join(REPO_ROOT, 'test/fixtures', p)]), entry, mode], {
    env: { ...process.env, ...NO_COVERAGE_ENV, PORT: String(port), ...(opts.paceMs === undefined ? {} : { SWY_EVERYTHING_PACE_MS: String(opts.paceMs) }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => void child.kill());
  await waitFor(child, /running on port|listening on port/i, `server-everything ${mode}`);
  return { url: `http://127.0.0.1:${port}${mode === 'sse' ? '/sse' : '/mcp'}`, child };
}

/** Starts the hand-written fixture (test/fixtures/raw-server.mjs) over HTTP, 2026-07-28; resolves with its MCP URL. */
export async function rawHttp(t: { after(fn: () => void | Promise<void>): void }, ...args: string[]): Promise<string> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs'), 'http', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void child.kill());
  const m = await waitFor(child, /listening (http:\/\/\S+)/, 'raw fixture');
  return m[1];
}

/**
 * Starts the conformance fixture (test/fixtures/conformance-server/server.mjs, the v2 SDK) over
 * HTTP in one era, or in both on one URL (`both`: 2026-07-28 requests and 2025 sessions); resolves with its MCP URL.
 */
export async function conformanceHttp(t: { after(fn: () => void | Promise<void>): void }, era: '2025' | '2026' | 'both'): Promise<string> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'test/fixtures/conformance-server/server.mjs'), 'http', '--era', era], {
    env: { ...process.env, ...NO_COVERAGE_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => void child.kill());
  const m = await waitFor(child, /listening (http:\/\/\S+)/, `conformance fixture (${era})`);
  return m[1];
}

/** Starts the 2026-07-28 fixture server (test/fixtures/modern-http-server.mjs). */
export async function modernHttp(t: { after(fn: () => void | Promise<void>): void }): Promise<TestServer> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'test/fixtures/modern-http-server.mjs')], {
    env: { ...process.env, ...NO_COVERAGE_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => void child.kill());
  const m = await waitFor(child, /listening (http:\/\/\S+)/, 'modern fixture');
  return { url: m[1], child };
}

/**
 * server-everything in streamableHttp mode on 127.0.0.1:`port` (a port it can be restarted on, for
 * tests of an upstream that restarts); resolves once it listens. The caller stops it ({@link stopChild}).
 */
export async function everythingOnPort(port: number): Promise<ChildProcess> {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const child = spawn(process.execPath, ['--require', path.join(REPO_ROOT, 'test/fixtures/loopback-preload.cjs'), entry, 'streamableHttp'], {
    env: { ...process.env, ...NO_COVERAGE_ENV, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`server-everything did not start: ${out}`)), 20_000);
    const on = (d: Buffer) => {
      out += d.toString();
      if (/listening on port/i.test(out)) {
        clearTimeout(t);
        resolve();
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`server-everything exited ${code}: ${out}`)));
  });
  return child;
}

/** Stops `child` (SIGTERM) and resolves once it has exited; at once when it already has. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill();
  });
}
