// One line per interval with a count, for a log event that may come in a flood.

/** A line said at most once per interval, counting what it did not say: see {@link createIntervalLine}. */
export interface IntervalLine {
  /**
   * Counts one occurrence. Returns the count for the line when one is due now (this occurrence
   * and every one held back since the last line, so at least 1; the count then starts again), or
   * undefined when the last line was less than the interval ago.
   */
  hit(): number | undefined;
}

/**
 * A line for an event that may come in a flood (refused connections, refused requests): the first
 * occurrence is said at once, then at most one line per `intervalMs`, each with the number of
 * occurrences since the line before, so that a peer that triggers thousands a second writes one
 * line a minute and the count still adds up. Memory: two numbers.
 * @param intervalMs the least time between two lines, ms (a positive number).
 * @param now the clock, ms (default `Date.now`).
 */
export function createIntervalLine(intervalMs: number, now: () => number = () => Date.now()): IntervalLine {
  let lastLineAt = -Infinity;
  let count = 0;
  return {
    hit() {
      count++;
      const at = now();
      if (at - lastLineAt < intervalMs) return undefined;
      lastLineAt = at;
      const n = count;
      count = 0;
      return n;
    },
  };
}
