// A circuit breaker for one upstream: after N consecutive failed calls it fails calls fast for a
// cool-down, then lets one trial call through, which closes it again or opens it for another.

/** `closed` (calls pass), `open` (calls fail fast), `half-open` (the cool-down is over: one trial may pass). */
export type BreakerState = 'closed' | 'open' | 'half-open';

/** How a call may proceed. */
export type BreakerTicket =
  /** Pass; `trial` when this call decides whether the breaker closes. */
  | { ok: true; trial: boolean }
  /** Refused: the breaker is open (or its trial runs); a call may be tried again in `retryInMs`. */
  | { ok: false; retryInMs: number };

/** Settings of {@link createBreaker}. */
export interface BreakerOptions {
  /** Consecutive failures that open the breaker (`upstreamBreakerFailures`). */
  failures: number;
  /** Time the breaker stays open before a trial, ms (`upstreamBreakerCooldownMs`). */
  cooldownMs: number;
  /** Clock, ms (default `Date.now`). */
  now?: () => number;
}

/** One breaker. Every method is synchronous and cheap (it sits on each call). */
export interface Breaker {
  readonly state: BreakerState;
  /** Consecutive failures counted so far. */
  readonly failures: number;
  /** May a call proceed now? A `trial` ticket must be settled with `success`, `failure` or `release`. */
  admit(): BreakerTicket;
  /** Like `admit`, without taking anything: would a call pass now? */
  peek(): boolean;
  /** The call succeeded: the count starts over, a trial closes the breaker. @returns true when this closed it */
  success(trial: boolean): boolean;
  /** The call failed: counted; at the threshold, or on a failed trial, the breaker opens. @returns true when this opened it */
  failure(trial: boolean): boolean;
  /** A trial ended without a verdict (the client cancelled it): the next call may be the trial. */
  release(trial: boolean): void;
  /** Time until the breaker lets a trial through, ms (0 when closed or half-open). */
  retryInMs(): number;
}

/**
 * Creates a circuit breaker: `closed` until `failures` calls in a row fail; then `open` for
 * `cooldownMs`, refusing every call; then `half-open`, where the first call to `admit` is the
 * trial and every other call is refused until it settles. A successful trial closes the breaker,
 * a failed one opens it for another cool-down.
 * @see Martin Fowler, "CircuitBreaker" (bliki); Nygard, Release It! ch. 5 (the pattern's states)
 */
export function createBreaker(o: BreakerOptions): Breaker {
  const now = o.now ?? Date.now;
  let state: BreakerState = 'closed';
  let failures = 0;
  let openUntil = 0;
  let trialRunning = false;

  const current = (): BreakerState => {
    if (state === 'open' && now() >= openUntil) state = 'half-open';
    return state;
  };
  const open = () => {
    state = 'open';
    openUntil = now() + o.cooldownMs;
    trialRunning = false;
  };

  return {
    get state() {
      return current();
    },
    get failures() {
      return failures;
    },
    admit() {
      const s = current();
      if (s === 'closed') return { ok: true, trial: false };
      if (s === 'open') return { ok: false, retryInMs: openUntil - now() };
      if (trialRunning) return { ok: false, retryInMs: o.cooldownMs };
      trialRunning = true;
      return { ok: true, trial: true };
    },
    peek() {
      const s = current();
      return s === 'closed' || (s === 'half-open' && !trialRunning);
    },
    success(trial) {
      failures = 0;
      if (!trial || state !== 'half-open') return false;
      state = 'closed';
      trialRunning = false;
      return true;
    },
    failure(trial) {
      failures++;
      if (trial && state === 'half-open') {
        open();
        return true;
      }
      if (state === 'closed' && failures >= o.failures) {
        open();
        return true;
      }
      return false;
    },
    release(trial) {
      if (trial && state === 'half-open') trialRunning = false;
    },
    retryInMs() {
      return current() === 'open' ? Math.max(0, openUntil - now()) : 0;
    },
  };
}
