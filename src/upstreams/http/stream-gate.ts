// The bound on an HTTP upstream's long-lived streams (2025 GET streams, HTTP+SSE session streams):
// each holds one of the upstream Agent's connections for its life, so without a bound enough open
// sessions would take every connection, and every call's POST would wait for one that never frees.

import { streamReserve } from '../../core/limits.js';

/**
 * Places for long-lived streams to one upstream: at most `max` open at once, the rest of the
 * upstream's connections kept for requests. Places are taken at once ({@link tryTake}) or waited
 * for in order ({@link take}); every place taken is given back once ({@link give}).
 * Bounded: the waiters are sessions, at most the upstream's `maxSessions`.
 */
export class StreamGate {
  private open = 0;
  private readonly waiters: Array<() => void> = [];

  /** @param max places, at least 1: `maxUpstreamConnections` less its reserve ({@link streamPlaces}). */
  constructor(readonly max: number) {}

  /** Streams open now. */
  get size(): number {
    return this.open;
  }

  /** Takes a place if one is free now; false when all `max` are taken. */
  tryTake(): boolean {
    if (this.open >= this.max) return false;
    this.open++;
    return true;
  }

  /**
   * Resolves once a place is taken (in the order asked), or rejects with `signal`'s reason when it
   * aborts first (nothing is then taken).
   */
  take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.tryTake()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Gives a place back: to the first waiter, else free. */
  give(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.open = Math.max(0, this.open - 1);
  }
}

/**
 * How many of an upstream's `connections` its streams may hold: all but 1/`divisor` of them (at
 * least one kept for requests, at least one place for a stream), the listener's
 * `streamReserveDivisor` rule applied to the upstream's Agent.
 */
export function streamPlaces(connections: number, divisor: number): number {
  return Math.max(1, connections - streamReserve(connections, divisor));
}
