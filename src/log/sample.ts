// Bounding repeated log lines: the first few of a run, then a sample (one line per interval with a count: src/core/interval-line.ts).

/**
 * Whether the `n`th occurrence (from 1) of a repeated event is logged at its own level: each of
 * the first `first`, then every `every`th. A fault that repeats for as long as it lasts (a dead
 * upstream's reconnects, a child's invalid lines) is then said, and said again now and then,
 * without a line per occurrence.
 */
export function sampledLine(n: number, first: number, every: number): boolean {
  return n <= first || n % every === 0;
}
