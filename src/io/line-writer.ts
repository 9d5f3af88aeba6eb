// Newline-terminated lines into a writable stream (a stdio child's stdin): a large line piece by
// piece as the stream drains, the lines written meanwhile after it, in order.

/** The stream a `LineWriter` writes to: a Node Writable (a child's stdin). */
export interface LineTarget {
  /** Writes a chunk; false when the caller should wait for `drain`. */
  write(chunk: string): boolean;
  end(): void;
  once(event: 'drain', listener: () => void): unknown;
  /** Bytes written and not yet handed to the OS. */
  readonly writableLength: number;
  readonly writable: boolean;
}

/**
 * Writes lines to one stream. A line given as one string is written at once (with its `\n`); a
 * line given as pieces (a large message, `JsonPieces`) is written piece by piece, each once the
 * stream has taken the previous ones (`write` returned true, or `drain`). Lines written while
 * one is in pieces wait behind it, in order.
 *
 * Why: written all at once, the pieces wait in the Writable's buffer as strings, and the stream
 * then hands them to libuv as one writev, which encodes them all into one more buffer of the
 * whole line (three bytes reserved per UTF-16 unit): a 5 MB request cost 5 MB more RSS for as
 * long as the child took to read it.
 */
export class LineWriter {
  /** Lines waiting behind a line being written in pieces; undefined when none is being written. */
  private waiting: Array<string | Iterable<string>> | undefined = undefined;
  /** What the lines in `waiting` count in `backlog`. */
  private waitingBytes = 0;
  /** What the line being written in pieces counts in `backlog` (0 when none is). */
  private pumpingBytes = 0;
  private ending = false;

  /**
   * @param out the stream.
   * @param largeLineBytes what a line in pieces counts in `backlog` while it waits or is being
   *   written, bytes (its size is known only once written): the least a large line holds; a
   *   line whose pieces say they hold more (`JsonPieces.units`) counts that.
   */
  constructor(
    private readonly out: LineTarget,
    private readonly largeLineBytes: number,
  ) {}

  /**
   * Bytes written that the stream has not handed to the OS, plus what waits: lines in one string
   * by their length, a line in pieces (being written or waiting) as the least it holds (its
   * `units`, at least `largeLineBytes`). Counted as `largeLineBytes` whatever their size, lines of
   * 1 MiB let a child that stopped reading be sent five times `maxUpstreamMessageBytes`
   * (test/regressions/stdio-backlog.test.ts).
   */
  get backlog(): number {
    return this.out.writableLength + (this.waiting ? this.pumpingBytes + this.waitingBytes : 0);
  }

  /** Writes one line (its `\n` is appended); false when the stream takes no more (ended or gone). */
  write(line: string | Iterable<string>): boolean {
    if (this.ending || !this.out.writable) return false;
    if (this.waiting) {
      this.waiting.push(line);
      this.waitingBytes += this.sizeOf(line);
    } else if (typeof line === 'string') this.out.write(`${line}\n`);
    else this.pump(line, []);
    return true;
  }

  private sizeOf(line: string | Iterable<string>): number {
    if (typeof line === 'string') return line.length + 1;
    const units = (line as { units?: unknown }).units;
    return typeof units === 'number' ? Math.max(this.largeLineBytes, units + 1) : this.largeLineBytes;
  }

  /** Ends the stream once every line given so far is written. */
  end(): void {
    this.ending = true;
    if (!this.waiting) this.out.end();
  }

  /** Writes `pieces` and its `\n` as the stream drains, then the lines of `after` and those written meanwhile. */
  private pump(pieces: Iterable<string>, after: Array<string | Iterable<string>>): void {
    const out = this.out;
    this.waiting = after;
    this.pumpingBytes = this.sizeOf(pieces);
    this.waitingBytes = 0;
    for (const line of after) this.waitingBytes += this.sizeOf(line);
    writeAsDrained(out, pieces[Symbol.iterator](), true, () => !out.writable, '\n', {
      done: () => this.next(),
      // A piece that cannot be serialized (it throws): the line is cut, and so is the stream,
      // since the child would read the next line as the end of this one.
      failed: () => {
        this.waiting = undefined;
        this.waitingBytes = 0;
        this.ending = true;
        out.end();
      },
    });
  }

  /** Writes the lines that waited, up to the next one in pieces; ends the stream if asked meanwhile. */
  private next(): void {
    const queue = this.waiting!;
    this.waiting = undefined;
    this.waitingBytes = 0;
    for (let i = 0; i < queue.length; i++) {
      const line = queue[i];
      if (typeof line === 'string') this.out.write(`${line}\n`);
      else {
        // The rest waits behind it (it may finish at once, and then writes them itself).
        this.pump(line, queue.slice(i + 1));
        return;
      }
    }
    if (this.ending) this.out.end();
  }
}

/** A stream `writeAsDrained` writes to: `write` says whether to wait for `drain` before the next chunk. */
export interface DrainTarget {
  write(chunk: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/**
 * Writes `pieces`, then `tail`, to `out` as it takes them: after a `write` that returns false,
 * the next piece waits for `drain`. So a large message given as pieces is never handed over all
 * at once, where the stream would join every piece into one more buffer of the whole (one
 * writev). Stops, calling nothing, once `gone()` says the stream went; calls `on.failed` if a
 * piece throws (it cannot be serialized), else `on.done` after `tail` is written.
 * @param ready false when the last write before these pieces asked to wait for `drain`.
 * @see Node.js stream docs, writable.write() and the 'drain' event (backpressure)
 */
export function writeAsDrained(
  out: DrainTarget,
  pieces: Iterator<string>,
  ready: boolean,
  gone: () => boolean,
  tail: string,
  on: { done(): void; failed(): void },
): void {
  const step = (): void => {
    try {
      for (;;) {
        if (gone()) return;
        if (!ready) {
          ready = true;
          out.once('drain', step);
          return;
        }
        const next = pieces.next();
        if (next.done) break;
        ready = out.write(next.value);
      }
      out.write(tail);
    } catch {
      on.failed();
      return;
    }
    on.done();
  };
  step();
}
