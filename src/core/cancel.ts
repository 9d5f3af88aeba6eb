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
