// The gateway's cluster view without a `cluster` section: held calls in memory, nothing shared.
// Kept apart from replicas.ts so that a gateway without `cluster` never loads the Redis client.

import { createHash } from 'node:crypto';
import { HeldCalls } from '../core/calls.js';
import type { GatewayCluster, ReplicasOptions } from './replicas.js';

/** Held calls at once; one more is refused with SWY_ERR_ADMISSION_BUSY (as with a cluster). */
const MAX_HELD_CALLS = 1024;

/**
 * The cluster of a lone gateway: held-call states are HMACs keyed by `requestStateKey`
 * (SHA-256 of it) or by a random key, and the rest is inert (no replica id, no shared buckets,
 * no per-mount services, Redis `off`, always ready and never degraded, no derived keys).
 * @param o `requestStateKey`, and `limits.clientRequestTimeoutMs` as the held calls' life (ms)
 * @see docs/scaling.md (what changes with `cluster`)
 */
export function createLocalCluster(
  o: Pick<ReplicasOptions, 'requestStateKey'> & { readonly limits: Pick<ReplicasOptions['limits'], 'clientRequestTimeoutMs'> },
): GatewayCluster {
  const key = o.requestStateKey ? createHash('sha256').update(o.requestStateKey).digest() : undefined;
  return {
    replicaId: undefined,
    keyId: undefined,
    held: new HeldCalls(key, MAX_HELD_CALLS, o.limits.clientRequestTimeoutMs),
    buckets: undefined,
    forMount: () => undefined,
    status: () => ({ redis: 'off' }),
    notReady: () => [],
    degraded: () => [],
    derivedKey: () => undefined,
    close: async () => {},
  };
}
