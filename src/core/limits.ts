// Default bounds for every map, queue, buffer and timer. All are configurable (docs/config.md).

/** Every bound Switchyard enforces; units are in the names (ms, bytes). */
export interface Limits {
  /** Largest request body accepted, bytes (413 above). */
  maxBodyBytes: number;
  /** Longest integer literal, digits (-32700 above). */
  maxIntegerDigits: number;
  /** Longest string id / progress token, UTF-8 bytes (-32600 / -32602 above). */
  maxIdBytes: number;
  /** Deepest nesting of arrays and objects in one message (-32700 above). */
  maxJsonDepth: number;
  /** Open TCP connections; one more is closed unread. */
  maxConnections: number;
  /** Time to receive request headers, ms. */
  headTimeoutMs: number;
  /** Time to receive the body after the headers, ms. */
  bodyTimeoutMs: number;
  /** Open listen, GET and HTTP+SSE notification streams (503 above). */
  maxSubscriptions: number;
  /** Live sessions per dialect (503 above). */
  maxSessions: number;
  /**
   * Live sessions of one dialect one client holds on one mount of one replica (429
   * SWY_ERR_SESSION_CLIENT_LIMIT above); the client is the verified principal, else the remote
   * address (behind `trustProxy`, the forwarded one). See `clientKey` in client-share.ts.
   */
  maxSessionsPerClient: number;
  /** Open `subscriptions/listen` streams one client holds on one mount of one replica (429 SWY_ERR_SUBSCRIPTION_CLIENT_LIMIT above). */
  maxSubscriptionsPerClient: number;
  /** Idle time after which a session expires, ms (then 404). */
  sessionIdleMs: number;
  /** Requests executing at once (then queued). */
  maxConcurrent: number;
  /** Requests waiting for a slot (then SWY_ERR_ADMISSION_BUSY). */
  maxQueued: number;
  /**
   * Requests one verified principal may have running or waiting at once, per mount (then 429
   * SWY_ERR_ADMISSION_PRINCIPAL_BUSY); unauthenticated and stdio-local callers are not counted.
   */
  maxConcurrentPerPrincipal: number;
  /** Deadline per request, ms (then SWY_ERR_REQ_DEADLINE and upstream cancellation). */
  requestTimeoutMs: number;
  /** Events kept per SSE stream for Last-Event-ID resumption (oldest dropped). */
  resumeBufferEvents: number;
  /** Characters of events kept for Last-Event-ID resumption by all the 2025 sessions of a mount together (oldest of a stream dropped first). */
  resumeBufferBytes: number;
  /**
   * Characters of events one 2025 session's GET stream keeps for Last-Event-ID resumption, those
   * it buffers while no connection carries it included (oldest dropped first).
   */
  resumeBufferGetStreamBytes: number;
  /** Bytes buffered for one slow SSE client before it is cut. */
  maxStreamBufferBytes: number;
  /** Interval of SSE keepalive comments, ms. */
  keepaliveMs: number;
  /** Messages in one 2025-03-26 batch. */
  maxBatchMessages: number;
  /** input_required rounds the initialize-era shim runs for one request. */
  maxInputRounds: number;
  /** Time a server-to-client request waits for the client's answer, ms. */
  clientRequestTimeoutMs: number;
  /** In-flight requests per upstream (SWY_ERR_UPSTREAM_OVERLOADED above). */
  maxInFlightPerUpstream: number;
  /** Time allowed for in-flight work after SIGINT/SIGTERM, ms. */
  shutdownGraceMs: number;
  /** Time a stdio child has to answer its era probe and initialize at start, ms. */
  upstreamStartTimeoutMs: number;
  /**
   * Time an upstream has to answer a request the gateway makes on its own behalf (initialize,
   * discover, subscribe, answers and notifications it POSTs) and to send the headers of an
   * HTTP+SSE POST's answer, ms.
   */
  upstreamRequestTimeoutMs: number;
  /**
   * Time a call on a new 2025 upstream session waits for that session's GET stream to open (its
   * response headers) before it is sent without it, ms. The GET goes on opening meanwhile.
   */
  upstreamGetStreamWaitMs: number;
  /** One step of the era probe: an HTTP probe POST or GET, or a stdio child's answer to `server/discover`, ms. */
  upstreamProbeTimeoutMs: number;
  /** First delay before reconnecting an upstream stream or restarting a stdio child, ms (doubles per failure). */
  upstreamBackoffMinMs: number;
  /** Cap of that backoff, and of the `retry` an upstream SSE stream announces, ms. */
  upstreamBackoffMaxMs: number;
  /** Uptime after which a restarted stdio child counts as stable (its backoff starts over), ms. */
  upstreamStableAfterMs: number;
  /** Each step of a stdio child's ordered shutdown (stdin closed, SIGTERM, SIGKILL); also how long a child whose stdout ended may go on running before it is killed, ms. */
  upstreamStopTimeoutMs: number;
  /** Resumptions (GET with Last-Event-ID) of one upstream SSE answer before its call fails. */
  maxUpstreamResumes: number;
  /** Largest message accepted from an upstream: one stdio line, one JSON body, one SSE event, bytes. */
  maxUpstreamMessageBytes: number;
  /**
   * Consecutive failed calls (network or protocol error, deadline) that open an HTTP upstream's
   * circuit breaker; for a stdio upstream, consecutive calls that reached their deadline with no
   * output from the child, after which the child is killed and restarted.
   */
  upstreamBreakerFailures: number;
  /** Time an open circuit breaker fails calls fast before it lets one trial call through, ms. */
  upstreamBreakerCooldownMs: number;
  /** Connections one HTTP upstream's undici Agent opens at most (calls beyond them wait for a free one). */
  maxUpstreamConnections: number;
  /** Time to establish one TCP (and TLS) connection to an HTTP upstream, ms. */
  upstreamConnectTimeoutMs: number;
  /** Idle time after which a kept-alive connection to an HTTP upstream is closed, ms. */
  upstreamKeepAliveTimeoutMs: number;
  /** Time a new TCP connection has to send its first byte, ms (then it is closed). */
  firstByteTimeoutMs: number;
  /** Open TCP connections from one remote address (one more is closed at accept). */
  maxConnectionsPerAddress: number;
  /**
   * Share kept free of long-lived streams for POSTs: 1/this of `maxConnections` and of
   * `maxConnectionsPerAddress` (at least one connection each); a GET stream past it gets 503.
   */
  streamReserveDivisor: number;
  /**
   * The whole lingering close of a connection refused before its body was read (413, 501, a
   * framing error): its rest is read and dropped for at most this long after the half-close, ms.
   */
  lingerTimeMs: number;
  /** The longest wait for a lingering connection's next bytes, ms (then it is closed). */
  lingerIdleMs: number;
  /** Bytes a lingering connection may still send, read and dropped; one more and it is closed. */
  lingerMaxBytes: number;
}

/**
 * The longest delay, ms, a Node timer honours (2^31 − 1, about 24.8 days): a longer one fires
 * after 1 ms, with a TimeoutOverflowWarning. The config schema's ms bounds stop there too; so do
 * the ms flags of `probe` and `emulate`.
 * @see Node.js timers, setTimeout (delay)
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** The defaults (the config schema repeats them; a test keeps both in step). */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxBodyBytes: 2 * 1024 * 1024,
  maxIntegerDigits: 64,
  maxIdBytes: 256,
  maxJsonDepth: 128,
  maxConnections: 1024,
  headTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  maxSubscriptions: 256,
  maxSessions: 10_000,
  maxSessionsPerClient: 1000,
  maxSubscriptionsPerClient: 64,
  sessionIdleMs: 30 * 60_000,
  maxConcurrent: 512,
  maxQueued: 2048,
  maxConcurrentPerPrincipal: 256,
  requestTimeoutMs: 300_000,
  resumeBufferEvents: 256,
  resumeBufferBytes: 64 * 1024 * 1024,
  resumeBufferGetStreamBytes: 1024 * 1024,
  maxStreamBufferBytes: 8 * 1024 * 1024,
  keepaliveMs: 15_000,
  maxBatchMessages: 64,
  maxInputRounds: 8,
  clientRequestTimeoutMs: 120_000,
  maxInFlightPerUpstream: 4096,
  shutdownGraceMs: 5_000,
  upstreamStartTimeoutMs: 30_000,
  upstreamRequestTimeoutMs: 30_000,
  upstreamGetStreamWaitMs: 2_000,
  upstreamProbeTimeoutMs: 5_000,
  upstreamBackoffMinMs: 200,
  upstreamBackoffMaxMs: 10_000,
  upstreamStableAfterMs: 30_000,
  upstreamStopTimeoutMs: 2_000,
  maxUpstreamResumes: 10,
  maxUpstreamMessageBytes: 16 * 1024 * 1024,
  upstreamBreakerFailures: 5,
  upstreamBreakerCooldownMs: 10_000,
  maxUpstreamConnections: 512,
  upstreamConnectTimeoutMs: 10_000,
  upstreamKeepAliveTimeoutMs: 4_000,
  firstByteTimeoutMs: 2_000,
  maxConnectionsPerAddress: 256,
  streamReserveDivisor: 16,
  lingerTimeMs: 30_000,
  lingerIdleMs: 5_000,
  lingerMaxBytes: 64 * 1024 * 1024,
});

/**
 * The connections of `bound` kept free of long-lived streams for requests: 1/`divisor` of it
 * (default 16), at least one connection. Used for the listener's bounds (`streamReserveDivisor`)
 * and for an HTTP upstream's Agent (`maxUpstreamConnections`).
 */
export function streamReserve(bound: number, divisor = DEFAULT_STREAM_RESERVE_DIVISOR): number {
  return Math.max(1, Math.floor(bound / divisor));
}

/** Default share kept free of streams: 1/16 of each connection bound. */
export const DEFAULT_STREAM_RESERVE_DIVISOR = 16;
