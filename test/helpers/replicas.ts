// Test helper: Switchyard replicas in this process sharing one real Redis (a `cluster` config each,
// one sealing key), and the small waits the cluster tests need.

import { randomBytes } from 'node:crypto';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig, type Gateway } from '../../src/gateway.js';
import { recordingLog } from './redis.js';

/** One sealing key for every replica of a test file (32 random bytes, base64). */
export const CLUSTER_KEY = randomBytes(32).toString('base64');

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
