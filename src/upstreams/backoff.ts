// Reconnect delays for upstreams: exponential, bounded, with jitter, so that upstreams (or
// gateways) that failed together do not retry together.

/**
 * The delay before retry `attempt` (0-based), ms: "equal jitter", uniform in [cap/2, cap] where
 * cap = min(maxMs, minMs × 2^attempt). No delay exceeds `maxMs`, and none is below `minMs / 2`.
 * @param random source of jitter in [0, 1) (default `Math.random`).
 * @see AWS Architecture Blog, "Exponential Backoff And Jitter" (equal jitter)
 */
export function backoffDelayMs(attempt: number, minMs: number, maxMs: number, random: () => number = Math.random): number {
  const cap = Math.min(maxMs, minMs * 2 ** Math.min(Math.max(0, attempt), 30));
  const half = cap / 2;
  return Math.max(1, Math.round(half + random() * half));
}
