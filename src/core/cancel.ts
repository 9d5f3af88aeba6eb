// A request's cancellation without an AbortController: the core only asks whether and why the
// client went away and listens for it; a real AbortSignal is made only for code that needs one.

import { SwitchyardError } from './errors.js';

/**
 * The part of an `AbortSignal` the executor reads: an `AbortSignal` is one, and so is a
 * {@link Cancellation}. Listeners run once, when the client goes away.
 * @see DOM Standard §3.2 (AbortSignal)
 */
export interface CancelSignal {
  /** True once the client went away. */
  readonly aborted: boolean;
  /** Why: a SwitchyardError for a session that ended under the request, else anything. */
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * One request's cancellation, made per HTTP exchange. Creating an AbortController costs a few
 * microseconds in Node 20, and most requests are never cancelled and never need a real signal:
 * this keeps its listeners in a small array and makes the controller on the first read of
 * {@link Cancellation.signal} (already aborted when the request was).
 */
export class Cancellation implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;
  private controller: AbortController | undefined;

  /** Adds a listener, run once on abort; none is kept once aborted (read `aborted` first). */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }

  /** Aborts once with `reason` (default: an `AbortError` DOMException, as `AbortController.abort()` gives): the real signal first, if made, then each listener. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    this.controller?.abort(reason);
    if (listeners) for (const l of listeners) l();
  }

  /** A real AbortSignal that follows this cancellation, made on first read. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}

/** The watchers of each watched signal, behind the one listener {@link watchAbort} adds to it. */
const watched = new WeakMap<CancelSignal, { fns: Set<() => void>; listener: () => void }>();

/**
 * Runs `fn` once when `signal` aborts, through one listener on the signal however many callers
 * watch it: a call with many server requests pending watches its signal once per request, and
 * Node warns (`MaxListenersExceededWarning`, a line that is not JSON on stderr) past 10 listeners
 * on one AbortSignal. The caller checks `signal.aborted` first.
 * @returns stops watching; the signal's listener goes with the last watcher
 */
export function watchAbort(signal: CancelSignal, fn: () => void): () => void {
  let entry = watched.get(signal);
  if (!entry) {
    const fns = new Set<() => void>();
    const listener = () => {
      watched.delete(signal);
      for (const f of [...fns]) f();
    };
    entry = { fns, listener };
    watched.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  const { fns, listener } = entry;
  // A function of its own, so that one fn watched twice is two watchers.
  const watcher = () => fn();
  fns.add(watcher);
  return () => {
    if (!fns.delete(watcher) || fns.size > 0) return;
    if (watched.get(signal)?.fns === fns) watched.delete(signal);
    signal.removeEventListener('abort', listener);
  };
}

/**
 * True when `signal` was aborted because its request ran past its deadline (the executor aborts
 * it with SWY_ERR_REQ_DEADLINE after `requestTimeoutMs`), not because the client cancelled.
 */
export function deadlineReached(signal: CancelSignal): boolean {
  if (!signal.aborted) return false;
  const why: unknown = signal.reason;
  return why instanceof SwitchyardError && why.code === 'SWY_ERR_REQ_DEADLINE';
}

/** What a request's abort reason is when its parent signal aborts (default: the parent's reason). */
type ParentReason = (parent: CancelSignal) => unknown;

/** The options object of every abort listener this module adds (one, not one per request). */
const ONCE = { once: true } as const;

/**
 * One request's deadline and abort, in one object: a timer of `ms` milliseconds, the link to the
 * caller's signal (`parent`), the signal the work runs with (a real AbortController, made on the
 * first read of {@link Deadline.signal}, already aborted when the request was), and, for work that
 * must answer by then, the one promise that settles the request ({@link Deadline.outcome}): the
 * work's outcome, given to {@link Deadline.resolve} / {@link Deadline.reject}, or the first abort
 * reason, whichever comes first. Nothing races a second promise: every abort
 * comes through {@link Deadline.abort}, which rejects it directly.
 *
 * The first abort wins ({@link Deadline.why}): the parent's (its reason, or `parentReason(parent)`),
 * the deadline's (SWY_ERR_REQ_DEADLINE with detail `<ms> ms`), or one a caller gives
 * {@link Deadline.abort} (a shutdown, a cancellation from another replica). {@link Deadline.disarm}
 * clears the timer and removes the listener from `parent` (none is left behind when the work ends
 * first); call it once the work has ended, whatever way. Made per request on the executor's path:
 * it holds what the executor's request state held, and no closure but the parent listener, the
 * timer's callback and the promise's executor.
 * @see DOM Standard §3.1 (AbortController), §3.2 (AbortSignal)
 */
export class Deadline<T = unknown> {
  /** The first abort reason, or undefined while the work may still finish. */
  why: unknown = undefined;
  /** Settles the {@link outcome} with the work's result; a no-op after an abort. */
  resolve: (value: T) => void = noop;
  /** Settles the outcome with the work's failure; a no-op after an abort. */
  reject: (reason: unknown) => void = noop;
  private ac: AbortController | undefined = undefined;
  /** What the signal is aborted with, where that is not `why` (see `cancelOnExpiry`). */
  private signalWhy: unknown = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;
  private parent: CancelSignal | undefined = undefined;
  private onParent: (() => void) | undefined = undefined;

  /** The signal the work runs with, made on first read; aborted at once when the request already was. */
  get signal(): AbortSignal {
    if (!this.ac) {
      this.ac = new AbortController();
      if (this.why !== undefined) this.ac.abort(this.signalWhy ?? this.why);
    }
    return this.ac.signal;
  }

  /**
   * With true, the work's signal is aborted with SWY_ERR_REQ_CANCELLED on expiry (the request, and
   * the outcome, still with SWY_ERR_REQ_DEADLINE, which is that error's `cause`, so the upstream's
   * cancellation can say it timed out): the work is told to stop as cancelled, not as past its own
   * deadline ({@link deadlineReached} false). Set before {@link arm}; default false.
   */
  cancelOnExpiry = false;

  /**
   * The outcome, for work that must answer by the deadline: a promise of the value given to
   * {@link resolve}, or rejected with the failure given to {@link reject} or with the first abort
   * reason (SWY_ERR_REQ_DEADLINE `<ms> ms`, the parent's, or what {@link abort} was given),
   * whichever comes first; rejected at once when the request was already aborted. Call it once,
   * before the work starts.
   */
  outcome(): Promise<T> {
    const outcome = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    if (this.why !== undefined) this.reject(this.why);
    return outcome;
  }

  /**
   * Starts the clock and links `parent`: after `ms` milliseconds (a timer that does not hold the
   * process open; none when `ms` is undefined, for work bounded by its parent's deadline alone)
   * the request is aborted with SWY_ERR_REQ_DEADLINE, detail `<ms> ms` (its signal as
   * {@link cancelOnExpiry} says); when `parent` aborts (at once when it already has), with
   * `parentReason(parent)`, or the parent's reason without `parentReason`.
   */
  arm(ms: number | undefined, parent?: CancelSignal, parentReason?: ParentReason): void {
    if (parent) {
      const onParent = () => this.abort(parentReason ? parentReason(parent) : parent.reason);
      if (parent.aborted) onParent();
      else {
        this.parent = parent;
        this.onParent = onParent;
        parent.addEventListener('abort', onParent, ONCE);
      }
    }
    if (ms === undefined) return;
    this.timer = setTimeout(() => {
      const why = new SwitchyardError('SWY_ERR_REQ_DEADLINE', { detail: `${ms} ms` });
      this.abort(why, this.cancelOnExpiry ? new SwitchyardError('SWY_ERR_REQ_CANCELLED', { cause: why }) : why);
    }, ms);
    this.timer.unref();
  }

  /**
   * Aborts the request with `reason` unless it already was: the work's signal (if made) aborts
   * with `signalReason` (default: `reason`), then the outcome rejects with `reason` (never
   * undefined: an AbortSignal's reason is not).
   */
  abort(reason: unknown, signalReason: unknown = reason): void {
    if (this.why !== undefined) return;
    this.why = reason;
    if (signalReason !== reason) this.signalWhy = signalReason;
    if (this.ac) this.ac.abort(signalReason);
    this.reject(reason);
  }

  /** Clears the timer and removes the listener on the parent; call once the work has ended. */
  disarm(): void {
    clearTimeout(this.timer);
    if (this.onParent) this.parent!.removeEventListener('abort', this.onParent);
  }
}

function noop(): void {}

/**
 * `work(signal)` bounded by `ms` milliseconds and linked to `parent`, through a {@link Deadline}:
 * resolves with what the work resolves with, or rejects with its failure or the first abort reason:
 * SWY_ERR_REQ_DEADLINE with detail `<ms> ms` after `ms`, or `parent`'s reason when it aborts
 * first (the work's `signal` then aborts with the same reason; on expiry, with
 * SWY_ERR_REQ_CANCELLED when `cancelOnExpiry`, else with the deadline's). The timer and the
 * listener on `parent` are gone once this settles. The work starts even when `parent` has already
 * aborted (its signal aborted already), as a request the executor admitted does.
 * @throws SwitchyardError SWY_ERR_REQ_DEADLINE (detail `<ms> ms`); the parent's reason; the work's own errors
 */
export async function withinDeadline<T>(
  ms: number,
  parent: CancelSignal | undefined,
  work: (signal: AbortSignal) => Promise<T>,
  cancelOnExpiry = false,
): Promise<T> {
  const d = new Deadline<T>();
  d.cancelOnExpiry = cancelOnExpiry;
  const outcome = d.outcome();
  d.arm(ms, parent);
  try {
    work(d.signal).then(d.resolve, d.reject);
  } catch (err) {
    d.reject(err);
  }
  try {
    return await outcome;
  } finally {
    d.disarm();
  }
}
