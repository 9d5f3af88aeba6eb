// Test helper for the operations tests: free ports, the ops fixture server as a child process
// (restartable on its port), config files in a temp directory, and admin endpoints read whole.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig, type AssembleOptions, type Gateway } from '../../src/gateway.js';
import { recordingLogger, REPO_ROOT } from './gateway.js';

/** The fixture server of the operations tests. */
export const OPS_SERVER = path.join(REPO_ROOT, 'test/fixtures/ops-server.mjs');

/** A TCP port on 127.0.0.1 that was free a moment ago (bound, read back, closed). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** A gateway started from a raw config (validated as a file is), its log records kept; closed at teardown. */
export async function configGateway(
  t: { after(fn: () => Promise<void>): void },
  raw: Record<string, unknown>,
  opts: AssembleOptions = {},
): Promise<Gateway & { records: Array<Record<string, unknown>> }> {
  const records: Array<Record<string, unknown>> = [];
  const config = validateConfig({ listen: { host: '127.0.0.1', port: 0 }, ...raw }, 'test', { env: {} });
  const gw = await startGatewayFromConfig(config, recordingLogger(records), opts);
  t.after(() => gw.close());
  return Object.assign(gw, { records });
}

/** A running HTTP ops fixture. */
export interface OpsServer {
  url: string;
  child: ChildProcess;
  /** Kills it and resolves once it exited. */
  stop(): Promise<void>;
}

/** Starts the ops fixture in HTTP mode on `port` (0: any), stopped at teardown. */
export async function opsHttp(t: { after(fn: () => void | Promise<void>): void }, port = 0, name?: string): Promise<OpsServer> {
  const child = spawn(process.execPath, [OPS_SERVER, 'http', ...(name !== undefined ? ['--name', name] : [])], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const m = /listening (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`ops fixture exited ${code}: ${out}`)));
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Writes `config` as JSON into a fresh temp directory (removed at teardown); returns the file's path. */
export function configFile(t: { after(fn: () => void): void }, config: unknown): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-ops-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.json');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** GETs `url` and reads the whole body (JSON parsed when it is JSON). */
export async function getText(url: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; json: unknown }> {
  const res = await request(url);
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of a Prometheus text exposition (comments skipped; label values without escapes, as ours are). */
export function samples(exposition: string): Sample[] {
  const out: Sample[] = [];
  for (const line of exposition.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The samples named `name` whose labels include every pair of `where`. */
export function find(exposition: string, name: string, where: Record<string, string> = {}): Sample[] {
  return samples(exposition).filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v));
}

/** The values label `label` takes on the samples of `name` and its `_bucket`, `_sum`, `_count` series, sorted. */
export function labelValues(exposition: string, name: string, label: string): string[] {
  const names = new Set([name, `${name}_bucket`, `${name}_sum`, `${name}_count`]);
  return [...new Set(samples(exposition).flatMap((s) => (names.has(s.name) && label in s.labels ? [s.labels[label]] : [])))].sort();
}
