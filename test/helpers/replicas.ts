// Test helper: Switchyard replicas sharing one real Redis and one sealing key, in this process or as
// real CLI processes, and the small waits the cluster tests need.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig, type Gateway } from '../../src/gateway.js';
import { NO_COVERAGE_ENV } from './gateway.js';
import { recordingLog } from './redis.js';
import { modernBody, modernHeaders, post } from './http.js';

/** One sealing key for every replica of a test file (32 random bytes, base64). */
export const CLUSTER_KEY = randomBytes(32).toString('base64');

/** server-everything over stdio as upstream `ev` (its `trigger-elicitation-request` tool holds a 2026-07-28 call). */
export const EVERYTHING_UPSTREAMS = {
  ev: {
    command: process.execPath,
    args: [createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
    env: { ...NO_COVERAGE_ENV },
  },
};

/**
 * Writes a replica's config file for {@link spawnReplica}: `dialects` (default the 2026-07-28 and
 * 2025 ones), a cluster, {@link EVERYTHING_UPSTREAMS}, the listener on 127.0.0.1 port 0; in a
 * temporary directory removed after the test. Returns its path.
 */
export function everythingReplicaConfig(
  t: { after(fn: () => void): void },
  prefix: string,
  dialects: Record<string, boolean> = { modern: true, streamable: true },
): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'switchyard.json');
  const config = { listen: { host: '127.0.0.1', port: 0 }, dialects, cluster: {}, upstreams: EVERYTHING_UPSTREAMS };
  writeFileSync(configFile, JSON.stringify(config));
  return configFile;
}

/** A started replica and the log records it wrote. */
export interface TestReplica {
  readonly gw: Gateway;
  /** The first mount's MCP URL. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly records: Array<Record<string, unknown>>;
}

/** What {@link startReplica} takes. */
export interface ReplicaOptions {
  /** Replica id (`cluster.replicaId`). */
  id: string;
  /** `cluster.redis`; absent: a cluster without Redis (sealed ids, ledger in memory). */
  redis?: string;
  /** Sealing key (default {@link CLUSTER_KEY}). */
  key?: string;
  /** More top-level config (upstreams, limits, …). */
  config?: Record<string, unknown>;
}

/**
 * Starts a gateway with a `cluster` section on 127.0.0.1 port 0 serving every dialect, waits until
 * its Redis is up, and closes it in `t.after`.
 */
export async function startReplica(t: { after(fn: () => Promise<void>): void }, o: ReplicaOptions): Promise<TestReplica> {
  const records: Array<Record<string, unknown>> = [];
  const { log } = recordingLog(records);
  const config = validateConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      dialects: { modern: true, streamable: true, legacySse: true },
      cluster: { ...(o.redis ? { redis: o.redis } : {}), key: o.key ?? CLUSTER_KEY, replicaId: o.id },
      ...o.config,
    },
    'test',
    { expandEnv: false },
  );
  const gw = await startGatewayFromConfig(config, log, { clusterOptions: { redisOptions: { reconnectBaseMs: 20, reconnectMaxMs: 200 } } });
  t.after(() => gw.close());
  if (o.redis) await until(() => gw.cluster.status().redis === 'up', `replica ${o.id} to reach Redis`);
  return { gw, url: gw.url, origin: gw.url.replace(/^(http:\/\/[^/]+).*$/, '$1'), records };
}

/** Waits until `cond` holds, checking every `everyMs`; fails the test after `ms`. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 10_000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A replica running as a real `switchyard` CLI process. */
export interface ReplicaProcess {
  readonly id: string;
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly child: ChildProcess;
  /** Its JSON log records (stderr), as they come. */
  readonly records: Array<Record<string, unknown>>;
  /** Kills it with `signal` (default SIGKILL) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `node dist/src/cli/main.js --config <file> --port 0 [--redis URL]` with
 * `SWITCHYARD_CLUSTER_KEY` and `SWITCHYARD_REPLICA_ID` (and `o.env`) in its environment, reads its port from
 * the "listening on" line, and kills it (its process group: its stdio children too) in `t.after`.
 * @throws Error when it exits or does not listen within 30 s (its stderr in the message)
 */
export async function spawnReplica(
  t: { after(fn: () => Promise<void>): void },
  o: { id: string; configFile: string; redis?: string; key?: string; env?: Record<string, string> },
): Promise<ReplicaProcess> {
  const main = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const args = [main, '--config', o.configFile, '--port', '0', '--admin-port', '0', ...(o.redis ? ['--redis', o.redis] : [])];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...o.env, SWITCHYARD_CLUSTER_KEY: o.key ?? CLUSTER_KEY, SWITCHYARD_REPLICA_ID: o.id },
    stdio: ['ignore', 'ignore', 'pipe'],
    // Its own process group, signalled whole: a replica killed with SIGKILL takes its stdio
    // children with it, as a container stop does (server-everything outlives a bare kill -9 of
    // its parent: docs/upstreams.md), so that no test leaves one running.
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        child.kill(signal);
      }
    }
    await exited;
  };
  t.after(() => kill());
  const records: Array<Record<string, unknown>> = [];
  let text = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica ${o.id} did not listen within 30 s:\n${text.slice(-2000)}`)), 30_000);
    let partial = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (text.length < 100_000) text += chunk;
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith('{')) {
          try {
            records.push(JSON.parse(line) as Record<string, unknown>);
          } catch {
            // a line cut by the pipe; the records are diagnostics only
          }
        }
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`replica ${o.id} exited (${code ?? signal}):\n${text.slice(-2000)}`));
    });
  });
  return { id: o.id, port, origin: `http://127.0.0.1:${port}`, child, records, kill };
}

/**
 * Starts a 2026-07-28 `tools/call` of server-everything's `trigger-elicitation-request` on mount
 * `ev` of `origin` (client capability `elicitation`), which the replica there holds
 * (`input_required`); resolves with the round's `requestState` and its one input request's key.
 */
export async function holdElicitationCall(origin: string): Promise<{ requestState: string; key: string }> {
  const name = 'trigger-elicitation-request';
  const first = await post(`${origin}/ev/mcp`, modernBody(1, 'tools/call', { name, arguments: {} }, { elicitation: {} }), modernHeaders('tools/call', name));
  if (first.status !== 200) throw new Error(`held call: HTTP ${first.status} ${first.text}`);
  const round = (first.json as { result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> } }).result;
  if (round.resultType !== 'input_required') throw new Error(`held call: ${first.text}`);
  return { requestState: round.requestState, key: Object.keys(round.inputRequests)[0] };
}
