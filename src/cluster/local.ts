// The gateway's cluster view without a `cluster` section: held calls in memory, nothing shared.
// Kept apart from replicas.ts so that a gateway without `cluster` never loads the Redis client.

import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { HeldCalls } from '../core/calls.js';
import type { GatewayCluster, ReplicasOptions } from './replicas.js';

/** Held calls at once; one more is refused with SWY_ERR_ADMISSION_BUSY (as with a cluster). */
const MAX_HELD_CALLS = 1024;

/**
 * The cluster of a lone gateway: held-call states are HMACs keyed by `requestStateKey`
 * (SHA-256 of it) or by a random key, and the rest is inert (no replica id, no shared buckets,
 * no per-mount services, Redis `off`, always ready and never degraded). Derived keys (the
 * embedded demo's requestState) come from `requestStateKey` too, or from one random secret per
 * process: the same for every upstream instance a reload creates, and after a restart when
 * `requestStateKey` is set.
 * @param o `requestStateKey`, and `limits.clientRequestTimeoutMs` as the held calls' life (ms)
 * @see docs/scaling.md (what changes with `cluster`)
 */
export function createLocalCluster(
  o: Pick<ReplicasOptions, 'requestStateKey'> & { readonly limits: Pick<ReplicasOptions['limits'], 'clientRequestTimeoutMs'> },
): GatewayCluster {
  const key = o.requestStateKey ? createHash('sha256').update(o.requestStateKey).digest() : undefined;
  // Derived keys never equal the held calls' own HMAC key (HKDF with a purpose, as with a cluster).
  const secret = key ?? randomBytes(32);
  return {
    replicaId: undefined,
    keyId: undefined,
    held: new HeldCalls(key, MAX_HELD_CALLS, o.limits.clientRequestTimeoutMs),
    buckets: undefined,
    forMount: () => undefined,
    status: () => ({ redis: 'off' }),
    notReady: () => [],
    degraded: () => [],
    derivedKey: (purpose) => Buffer.from(hkdfSync('sha256', secret, 'switchyard/derived/v1', purpose, 32)),
    close: async () => {},
  };
}
