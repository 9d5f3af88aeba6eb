// Test helper for the operations tests: free ports, the hand-written fixture server (test/fixtures/raw-server.mjs) as a child process
// (restartable on its port), config files in a temp directory, and admin endpoints read whole.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig, type AssembleOptions, type Gateway } from '../../src/gateway.js';
import { recordingLogger, REPO_ROOT } from './gateway.js';
import { receiver, type Receiver } from './otlp.js';

export { freePort } from './servers.js';

/** The fixture server of the operations tests (a hand-written MCP server: names, trace context, connections). */
export const RAW_SERVER = path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs');

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

/**
 * A traced gateway in front of the fixture server (upstream `web`): spans exported over OTLP/HTTP
 * to a receiver every 20 ms, operations on, no admin listener.
 */
export async function tracedGateway(t: {
  after(fn: () => Promise<void> | void): void;
}): Promise<{ rx: Receiver; upstream: OpsServer; gw: Awaited<ReturnType<typeof configGateway>> }> {
  const rx = await receiver(t);
  const upstream = await opsHttp(t);
  const gw = await configGateway(
    t,
    { admin: false, upstreams: { web: { url: upstream.url } } },
    { operations: true, env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '20' } },
  );
  return { rx, upstream, gw };
}

/** A running HTTP fixture server. */
export interface OpsServer {
  url: string;
  child: ChildProcess;
  /** Kills it and resolves once it exited. */
  stop(): Promise<void>;
}

/** Starts the fixture server in HTTP mode on `port` (0: any), stopped at teardown. */
export async function opsHttp(t: { after(fn: () => void | Promise<void>): void }, port = 0, name?: string, extra: readonly string[] = []): Promise<OpsServer> {
  const child = spawn(process.execPath, [RAW_SERVER, 'http', ...(name !== undefined ? ['--name', name] : []), ...extra], {
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
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const m = /listening (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`fixture server exited ${code}: ${out}`)));
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

/** The `switchyard_refusals_total` samples above zero, each as `[labels, value]`, in exposition order. */
export function countedRefusals(exposition: string): Array<[Record<string, string>, number]> {
  return find(exposition, 'switchyard_refusals_total')
    .filter((s) => s.value > 0)
    .map((s) => [s.labels, s.value]);
}

/** The values label `label` takes on the samples of `name` and its `_bucket`, `_sum`, `_count` series, sorted. */
export function labelValues(exposition: string, name: string, label: string): string[] {
  const names = new Set([name, `${name}_bucket`, `${name}_sum`, `${name}_count`]);
  return [...new Set(samples(exposition).flatMap((s) => (names.has(s.name) && label in s.labels ? [s.labels[label]] : [])))].sort();
}

const H25 = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Opens a 2025-06-18 session on `url` (initialize, then initialized); resolves with its request headers and the server's name. */
export async function openSession(url: string): Promise<{ headers: Record<string, string>; serverName: string }> {
  const r = await request(url, {
    method: 'POST',
    headers: H25,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  const json = (await r.body.json()) as { result?: { serverInfo: { name: string } } };
  if (r.statusCode !== 200 || !json.result) throw new Error(`initialize failed: ${r.statusCode} ${JSON.stringify(json)}`);
  const headers = { ...H25, 'mcp-session-id': String(r.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
  await request(url, { method: 'POST', headers, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' }).then((x) => x.body.dump());
  return { headers, serverName: json.result.serverInfo.name };
}

/**
 * A gateway with its admin listener in front of upstream `up` (`extra`: more of the config), for
 * the upstream protocol-fault tests. `faults()` reads `switchyard_upstream_protocol_faults_total`
 * as `[upstream, kind, value]` sorted by kind; `counted(n)` polls it (bounded: 250 reads 20 ms
 * apart) until its values sum to at least `n` (default 1), then reads it once more if they never do.
 */
export async function faultsGateway(t: { after(fn: () => Promise<void>): void }, upstream: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const gw = await configGateway(t, { admin: { port: 0 }, upstreams: { up: upstream }, ...extra }, { operations: true });
  const admin = gw.admin!.address().url;
  const faults = async () =>
    find((await getText(`${admin}metrics`)).text, 'switchyard_upstream_protocol_faults_total')
      .map((s) => [s.labels.upstream, s.labels.kind, s.value])
      .sort((a, b) => String(a[1]).localeCompare(String(b[1])));
  const counted = async (n = 1) => {
    for (let i = 0; i < 250; i++) {
      const f = await faults();
      if (f.reduce((sum, s) => sum + Number(s[2]), 0) >= n) return f;
      await new Promise((r) => setTimeout(r, 20));
    }
    return faults();
  };
  return { gw, faults, counted };
}
