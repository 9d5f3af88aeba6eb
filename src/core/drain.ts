// The one drain: wait up to a grace for work in flight to settle, then cut what is left.

/**
 * Work a drain can wait on: whether any is left, and a signal that some may have settled.
 * Implemented by the executor (its requests, and a shutdown's held calls), the aggregate upstream
 * (a retired member's calls) and `HeldCalls` (retries resumed on a retired upstream instance).
 */
export interface Settling {
  /** True when nothing is left in flight; read once at the start and again at each settle signal. */
  idle: () => boolean;
  /**
   * Calls `fn` whenever some of the work may have settled (it may call it while work is left:
   * {@link Settling.idle} decides). Returns what removes `fn`; after that `fn` is never called.
   */
  onSettle: (fn: () => void) => () => void;
}

/**
 * Resolves true as soon as `work` is idle (at once when it already is), false once `ms`
 * milliseconds passed first. In every outcome the settle listener is removed and the timer
 * cleared, so that nothing of the wait is left behind.
 *
 * The timer is not unref'd, on purpose: a drain is a step of a shutdown or a reload that someone
 * awaits, and with the timer unref'd a process with nothing else to wait on would exit before
 * the grace ended, without the cut and the steps after it (stopping stdio children in order, the
 * `stopped` line). `ms` 0 (or less) still waits one timer turn, so work that settles in the
 * current turn (a microtask, an already-due callback) counts as settled.
 * @param ms how long to wait, ms
 */
export function settledWithin(work: Settling, ms: number): Promise<boolean> {
  if (work.idle()) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => {
      off();
      clearTimeout(timer);
      resolve(ok);
    };
    const off = work.onSettle(() => {
      if (work.idle()) done(true);
    });
    const timer = setTimeout(() => done(false), ms);
  });
}

/** What {@link drainThenCut} drains: the work, its grace, and how to cut what is left. */
export interface DrainThenCutOptions extends Settling {
  /** How long the work in flight gets to settle before the cut, ms (see {@link settledWithin} for 0). */
  graceMs: number;
  /**
   * Stops the work still in flight (each piece is expected to settle with the error the caller
   * gives it) and returns how many pieces it stopped. Called at most once, and only when the grace
   * ended first.
   */
  cut: () => number;
}

/** How a drain ended: `settled` when the work was idle within the grace (nothing cut, `cut` 0), else how many were cut. */
export interface DrainOutcome {
  settled: boolean;
  /** What `cut()` returned; 0 when the work settled. */
  cut: number;
}

/**
 * Waits up to `graceMs` for the work to settle ({@link settledWithin}), then calls `cut` once
 * for what is still in flight. Resolves at once (without a timer or a listener) when the work is
 * already idle. A settle signal after the cut finds no listener: waiting for the cut work to end
 * is the caller's choice (`Executor.close` gives it 1 s more). A throw from `cut` rejects the
 * promise.
 * @see docs/operations.md, "Held calls at shutdown and reload"
 */
export async function drainThenCut(opts: DrainThenCutOptions): Promise<DrainOutcome> {
  if (await settledWithin(opts, opts.graceMs)) return { settled: true, cut: 0 };
  return { settled: false, cut: opts.cut() };
}
