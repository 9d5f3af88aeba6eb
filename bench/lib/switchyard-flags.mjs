// Flags of the Switchyard processes the bench loads, kept free of the bench's own dependencies so
// that the test suite can check them against a real gateway (test/regressions/bench-client-share.test.ts).

/**
 * Sessions (2025 and HTTP+SSE) and `subscriptions/listen` streams one client may hold on a
 * gateway the bench loads: every row's load comes from 127.0.0.1, which the gateway counts as
 * one client under `maxSessionsPerClient` (default 1,000) and `maxSubscriptionsPerClient`
 * (default 64). A full run's idle-session row alone opens 1,005 2025 sessions on a process whose
 * load rows opened others before (and its idle-sse row 1,000 HTTP+SSE sessions), so the default
 * share refused it with 429 `SWY_ERR_SESSION_CLIENT_LIMIT`. `maxSessions`' default (10,000): the
 * bench measures the gateway as it was before the per-client share, bounded by the mount-wide
 * bounds alone.
 */
export const LOAD_CLIENT_SHARE = 10_000;

/**
 * `--limit` flags raising the per-client shares to `n` ({@link LOAD_CLIENT_SHARE}), for the
 * bounds a build knows (`known`: the names of its `DEFAULT_LIMITS`; an older build has none).
 * @param {readonly string[]} known
 * @param {number} [n]
 * @returns {string[]}
 */
export function perClientShare(known, n = LOAD_CLIENT_SHARE) {
  return ['maxSessionsPerClient', 'maxSubscriptionsPerClient'].flatMap((k) => (known.includes(k) ? ['--limit', `${k}=${n}`] : []));
}
