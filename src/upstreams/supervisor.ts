// Upstream health: one supervisor per configured upstream keeps its state (starting, up, down,
// draining, stopped), its last error and its calls in flight; reconnects in the background with
// backoff and jitter after a failed start; and, for HTTP upstreams, runs a circuit breaker.

import { deadlineReached } from '../core/cancel.js';
import type { UpstreamStateMessage } from '../core/diagnostics.js';
import { operatorText, PeerRpcError, SwitchyardError } from '../core/errors.js';
import type { CoreLog } from '../core/exchange.js';
import type { Limits } from '../core/limits.js';
import type { Implementation, RequestContext } from '../core/request.js';
import type { ServerDescription, Upstream, UpstreamCloseOptions } from '../core/upstream.js';
import { Lines } from '../log/lines.js';
import { sampledLine } from '../log/sample.js';
import { backoffDelayMs } from './backoff.js';
import { createBreaker, type Breaker } from './breaker.js';
import { publishState } from './state.js';

/** Reconnect attempts of one outage logged at info/warn before the rest go to debug. */
const LOUD_ATTEMPTS = 3;
/** After those, every this many-th attempt is logged at info/warn again. */
const LOUD_EVERY = 60;

/**
 * The least wait SWY_ERR_UPSTREAM_DOWN announces, ms, in `data.retryAfterMs` and (as whole
 * seconds) in `Retry-After`: neither reads 0 while an attempt is due or under way.
 * @see RFC 9110 §10.2.3 (Retry-After: delay-seconds)
 */
const MIN_RETRY_MS = 1_000;

/**
 * `starting` (the first attempt runs), `up` (serves), `down` (failed: reconnecting, restarting, or
 * its breaker is open), `draining` (finishing its calls before a stop), `stopped`.
 */
export type HealthState = 'starting' | 'up' | 'down' | 'draining' | 'stopped';

/** The bounds a supervisor uses. */
export type SupervisorLimits = Pick<Limits, 'upstreamBackoffMinMs' | 'upstreamBackoffMaxMs' | 'upstreamBreakerFailures' | 'upstreamBreakerCooldownMs'>;

/** How one upstream is supervised. */
export interface SupervisorOptions {
  /** Config name. */
  name: string;
  /** `stdio`, `http` or `embedded`. */
  transport: string;
  /**
   * Builds a fresh, unstarted upstream. Called once, and again for each reconnect after a failed
   * start (an upstream that never served holds nothing worth keeping). `onState` must receive its
   * lifecycle: a stdio child that exits and is restarted is down, then up again.
   */
  create(onState: (m: UpstreamStateMessage) => void): Upstream;
  limits: SupervisorLimits;
  log: CoreLog;
  /** Run a circuit breaker on calls (HTTP upstreams). */
  breaker?: boolean;
  /**
   * The breaker's own trial when its cool-down ends and no call came to be the trial (HTTP: an
   * era probe). Without it only a call can close the breaker.
   */
  check?: (u: Upstream) => Promise<void>;
  /** Jitter source in [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Clock, ms (default `Date.now`). */
  now?: () => number;
  /**
   * Where its lifecycle messages go (default `publishState`: the switchyard:upstream:* channels).
   * The runtime mutes a reload's new instance of a changed upstream here until the reload has kept
   * or replaced the running one, whose state and labels those messages would otherwise overwrite.
   */
  publish?: (m: UpstreamStateMessage) => void;
}

/** An upstream with its health. It is an Upstream: the executor and the aggregate call it as any other. */
export interface SupervisedUpstream extends Upstream {
  readonly state: HealthState;
  /** The last failure, as text (kept after recovery, for the status page). */
  readonly lastError: string | undefined;
  /** Calls running on it now. */
  readonly inFlight: number;
  /** `stdio`, `http` or `embedded`. */
  readonly transport: string;
  /** The revision it speaks, once it served. */
  readonly revision: string | undefined;
  /** Name and version it reported, once it served. */
  readonly serverInfo: Implementation | undefined;
  /** The upstream instance now (replaced by a reconnect after a failed start). */
  readonly current: Upstream;
  /** Calls `listener` on every state change; returns the function that stops it. */
  onChange(listener: (state: HealthState) => void): () => void;
  /**
   * Makes the first attempt (once; later calls get the same promise) and resolves when it serves.
   * When it fails, the upstream is down and this rejects with the cause; the failure is neither
   * logged nor retried until {@link SupervisedUpstream.beginReconnects} is called: the caller
   * decides when (the runtime calls it as soon as the attempt failed, unless the start may yet be
   * given up for `requireUpstreams`, or a reload may yet keep the running instance and stop this one).
   * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE (or the connector's own error) when the first attempt fails
   */
  start(): Promise<void>;
  /**
   * After the first attempt failed: logs it (`upstream down`) and begins the background
   * reconnects. Does nothing otherwise (before the attempt ended, once it succeeded, a second
   * time, after `close()`).
   */
  beginReconnects(): void;
  /**
   * Stops taking calls (SWY_ERR_UPSTREAM_DOWN), lets those in flight finish within `graceMs`,
   * then closes the upstream.
   */
  drain(graceMs: number): Promise<void>;
}

/** Why an upstream is down: its start failed (reconnecting), its stdio child exited (restarting), or its breaker opened. */
type DownCause = 'start' | 'exit' | 'breaker';

/**
 * A call outcome that counts against the breaker: the upstream could not be reached or answered
 * outside its protocol, or the call ran past its deadline. A cancelled call, an overload refusal
 * and the upstream's own JSON-RPC error do not.
 */
function isFailure(err: unknown, ctx: RequestContext): boolean {
  if (ctx.signal.aborted) return deadlineReached(ctx.signal);
  return err instanceof SwitchyardError && (err.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE' || err.code === 'SWY_ERR_UPSTREAM_PROTOCOL');
}

/**
 * Supervises one upstream. `start()` makes the first attempt and resolves when it serves; when it
 * fails, the upstream is marked down, `start()` rejects with the cause, and, once the caller calls
 * `beginReconnects()`, attempts continue in the background (delays from {@link backoffDelayMs} over `upstreamBackoffMinMs`…`upstreamBackoffMaxMs`)
 * until one succeeds or `close()`. While down, calls, `describe()` and subscriptions fail at once
 * with SWY_ERR_UPSTREAM_DOWN, whose `Retry-After` (seconds) says when the next attempt is due and
 * whose `data: { upstream, retryAfterMs }` says the same wait in ms: the time to the next attempt,
 * the rest of the cool-down or `upstreamBackoffMinMs`, at least 1,000 (an attempt due or under way
 * reads 1,000, not 0), the header being it rounded up to whole seconds.
 * With `breaker`, `upstreamBreakerFailures` failed calls in a row mark it down for
 * `upstreamBreakerCooldownMs`; then one trial (a call, or `check`) decides.
 * @see RFC 9110 §10.2.3 (Retry-After); src/upstreams/breaker.ts
 */
export function superviseUpstream(o: SupervisorOptions): SupervisedUpstream {
  const now = o.now ?? Date.now;
  const publish = o.publish ?? publishState;
  const { limits, log } = o;
  const breaker: Breaker | undefined = o.breaker
    ? createBreaker({ failures: limits.upstreamBreakerFailures, cooldownMs: limits.upstreamBreakerCooldownMs, now })
    : undefined;
  const listeners = new Set<(s: HealthState) => void>();
  const idle = new Set<() => void>();
  let state: HealthState = 'starting';
  let cause: DownCause = 'start';
  let served = false;
  let closed = false;
  let lastError: string | undefined;
  let revision: string | undefined;
  let serverInfo: Implementation | undefined;
  let inFlight = 0;
  let attempts = 0;
  let nextAttemptAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let started: Promise<void> | undefined;
  /** The first attempt failed, and nothing was logged or scheduled for it yet ({@link SupervisedUpstream.beginReconnects}). */
  let deferred = false;

  const make = (): Upstream => {
    const made: Upstream = o.create((m) => {
      if (made === current) onReport(m);
    });
    return made;
  };
  let current: Upstream = make();

  const set = (next: HealthState) => {
    if (state === next) return;
    state = next;
    for (const l of [...listeners]) {
      try {
        l(next);
      } catch (err) {
        log.error({ err, upstream: o.name }, Lines.internalFault);
      }
    }
  };
  const up = () => {
    served = true;
    attempts = 0;
    try {
      const d = current.describe();
      revision = d.upstreamRevision;
      serverInfo = d.serverInfo;
    } catch {
      // described once it serves; a connector that cannot describe itself yet keeps the old values
    }
    log.info({ upstream: o.name, revision }, Lines.upstreamReady);
    // Children and HTTP upstreams publish their own lifecycle; the embedded demo has none to publish.
    if (o.transport === 'embedded') publish({ upstream: o.name, state: 'ready', revision, transport: o.transport });
    set('up');
  };
  const down = (why: DownCause, err: unknown) => {
    cause = why;
    lastError = operatorText(err);
    log.error({ upstream: o.name, cause: why, err: lastError }, 'upstream down');
    set('down');
  };

  /** Lifecycle reports of the current instance after it served: a stdio child exiting and coming back. */
  const onReport = (m: UpstreamStateMessage) => {
    if (closed || state === 'draining' || !served) return;
    if (m.state === 'down' && state === 'up') down('exit', m.error ?? 'exited');
    else if (m.state === 'ready' && state === 'down' && cause === 'exit') {
      revision = m.revision ?? revision;
      up();
    }
  };

  /**
   * Whether attempt `n` of one outage is logged at its own level (info, warn): the first three,
   * then every 60th (about every 10 minutes at the default 10 s cap); the others at debug. An
   * upstream down for good otherwise wrote two lines every 10 s, about 700 an hour.
   */
  const heard = (n: number): boolean => sampledLine(n, LOUD_ATTEMPTS, LOUD_EVERY);
  const schedule = () => {
    if (closed) return;
    const delay = backoffDelayMs(attempts++, limits.upstreamBackoffMinMs, limits.upstreamBackoffMaxMs, o.random);
    nextAttemptAt = now() + delay;
    log[heard(attempts) ? 'info' : 'debug']({ upstream: o.name, delayMs: delay, attempt: attempts }, 'upstream reconnecting');
    timer = setTimeout(() => void reconnect(), delay);
    timer.unref();
  };
  const reconnect = async () => {
    timer = undefined;
    if (closed) return;
    const old = current;
    current = make();
    await old.close().catch(() => {});
    if (closed) return void (await current.close().catch(() => {}));
    try {
      await current.start();
    } catch (err) {
      if (closed) return;
      lastError = operatorText(err);
      log[heard(attempts) ? 'warn' : 'debug']({ upstream: o.name, err: lastError, attempt: attempts }, 'upstream reconnect failed');
      return schedule();
    }
    if (closed) return void (await current.close().catch(() => {}));
    up();
  };

  const breakerOpened = (err: unknown) => {
    down('breaker', err);
    publish({ upstream: o.name, state: 'down', transport: o.transport, error: err });
    if (!o.check) return;
    clearTimeout(timer);
    timer = setTimeout(() => void trial(), limits.upstreamBreakerCooldownMs);
    timer.unref();
  };
  const breakerClosed = () => {
    if (closed || state === 'draining') return;
    up();
    publish({ upstream: o.name, state: 'ready', revision, transport: o.transport });
  };
  /** The breaker's own trial, when no call took it during the cool-down. */
  const trial = async () => {
    timer = undefined;
    if (closed || !breaker || state !== 'down' || cause !== 'breaker') return;
    const ticket = breaker.admit();
    if (!ticket.ok) {
      // Not yet: node's timers keep their own clock, and one can fire a millisecond before the
      // breaker's clock says the cool-down is over; or a call holds the trial. Look again then,
      // or the breaker would wait for a call to close it.
      timer = setTimeout(() => void trial(), Math.max(1, ticket.retryInMs));
      timer.unref();
      return;
    }
    if (!ticket.trial) return;
    try {
      await o.check!(current);
    } catch (err) {
      if (breaker.failure(true) && !closed) {
        lastError = operatorText(err);
        timer = setTimeout(() => void trial(), limits.upstreamBreakerCooldownMs);
        timer.unref();
      }
      return;
    }
    if (breaker.success(true)) breakerClosed();
  };

  /** How long until the upstream may serve again, ms, before the floor of {@link MIN_RETRY_MS}. */
  const retryMs = (): number => {
    if (cause === 'breaker' && breaker) return breaker.retryInMs() || limits.upstreamBreakerCooldownMs;
    if (cause === 'start' && nextAttemptAt > 0) return Math.max(0, nextAttemptAt - now());
    return limits.upstreamBackoffMinMs;
  };
  const downError = (ms: number): SwitchyardError => {
    const why =
      state === 'draining' || state === 'stopped'
        ? 'is stopping'
        : state === 'starting'
          ? 'is starting'
          : cause === 'breaker'
            ? `failed ${limits.upstreamBreakerFailures} calls in a row (circuit open)`
            : cause === 'exit'
              ? 'is restarting'
              : 'is reconnecting';
    // One wait for both the header (whole seconds, rounded up) and `data`, at least 1 s: an attempt
    // that is due or under way reads 0 ms, which a client reading `data` takes as "retry at once".
    const waitMs = Math.max(MIN_RETRY_MS, Math.ceil(ms));
    return new SwitchyardError('SWY_ERR_UPSTREAM_DOWN', {
      detail: `${o.name} ${why}`,
      headers: { 'retry-after': String(Math.ceil(waitMs / 1000)) },
      data: { upstream: o.name, retryAfterMs: waitMs },
    });
  };
  /** The refusal for a call now, or undefined when it may go on (the breaker has the last word). */
  const gate = (): SwitchyardError | undefined => {
    if (state === 'up') return undefined;
    if (state === 'down' && cause === 'breaker' && breaker?.peek()) return undefined;
    return downError(retryMs());
  };

  const done = () => {
    inFlight--;
    if (inFlight === 0) for (const f of [...idle]) f();
  };
  const close = async (opts?: UpstreamCloseOptions) => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    timer = undefined;
    set('stopped');
    await current.close(opts);
  };

  return {
    name: o.name,
    transport: o.transport,
    get state() {
      return state;
    },
    get lastError() {
      return lastError;
    },
    get inFlight() {
      return inFlight;
    },
    get revision() {
      return revision;
    },
    get serverInfo() {
      return serverInfo;
    },
    get current() {
      return current;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    start() {
      started ??= (async () => {
        try {
          await current.start();
        } catch (err) {
          if (closed) throw err;
          // Down, but neither logged nor rescheduled: the caller may give the whole start up.
          cause = 'start';
          lastError = operatorText(err);
          deferred = true;
          set('down');
          throw err;
        }
        if (closed) throw downError(0);
        up();
      })();
      return started;
    },
    beginReconnects() {
      if (!deferred || closed) return;
      deferred = false;
      log.error({ upstream: o.name, cause, err: lastError }, 'upstream down');
      schedule();
    },
    describe(): ServerDescription {
      if (!served) throw downError(retryMs());
      const refusal = gate();
      if (refusal) throw refusal;
      return current.describe();
    },
    async request(ctx) {
      const refusal = gate();
      if (refusal) throw refusal;
      let trialCall = false;
      if (breaker) {
        const ticket = breaker.admit();
        if (!ticket.ok) throw downError(ticket.retryInMs);
        trialCall = ticket.trial;
      }
      inFlight++;
      try {
        const result = await current.request(ctx);
        if (breaker?.success(trialCall)) breakerClosed();
        return result;
      } catch (err) {
        if (breaker) {
          if (isFailure(err, ctx)) {
            if (breaker.failure(trialCall)) breakerOpened(err);
          } else if (err instanceof PeerRpcError) {
            if (breaker.success(trialCall)) breakerClosed();
          } else breaker.release(trialCall);
        }
        throw err;
      } finally {
        done();
      }
    },
    subscribe(filter, sink) {
      if (!served) throw downError(retryMs());
      return current.subscribe(filter, sink);
    },
    subscribeSession(ref, filter, sink) {
      if (!served) throw downError(retryMs());
      const u = current;
      return u.subscribeSession ? u.subscribeSession(ref, filter, sink) : u.subscribe(filter, sink);
    },
    release(sessionKey) {
      current.release?.(sessionKey);
    },
    forwardNotification(sessionKey, n) {
      current.forwardNotification?.(sessionKey, n);
    },
    async drain(graceMs) {
      if (closed) return;
      set('draining');
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const finish = () => {
            idle.delete(finish);
            clearTimeout(t);
            resolve();
          };
          const t = setTimeout(finish, graceMs);
          idle.add(finish);
        });
      }
      await close();
    },
    close: (opts?: UpstreamCloseOptions) => close(opts),
  };
}
