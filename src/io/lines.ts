// Newline-delimited framing shared by both stdio sides (the stdio front door and stdio children):
// a bounded line splitter over bytes.

/**
 * One event of the line splitter: a complete line (without `\n`) as one buffer; a long line as the
 * parts it arrived in (`long-line`, only from a splitter made with `partsFrom`); or a line that
 * broke the bound.
 */
export type LineEvent = { kind: 'line'; bytes: Buffer } | { kind: 'long-line'; parts: readonly Buffer[]; length: number } | { kind: 'too-long' };

/** Options of a `LineSplitter`. */
export interface LineSplitterOptions {
  /**
   * A line of at least this many bytes that arrived in more than one chunk is yielded as its
   * parts (`long-line`, views of the chunks, in order) instead of joined into one buffer, a copy
   * of the whole line (for `parseJsonBytes`, which reads the parts as they are). Default: never.
   */
  partsFrom?: number;
}

/**
 * Splits a byte stream into `\n`-terminated lines, holding at most `maxLineBytes` bytes of one
 * line. A line that grows past the bound yields one `too-long` event as soon as it does (before
 * its end arrives), and the rest of it, up to and including its `\n`, is discarded. A final line
 * without `\n` is yielded by `end()`. The `\n` is not part of a line; a `\r` before it is (JSON
 * treats it as whitespace).
 * @see 2025-11-25 basic/transports#stdio (messages are delimited by newlines, contain none)
 */
export class LineSplitter {
  private readonly max: number;
  private readonly partsFrom: number;
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;

  /** @param maxLineBytes longest line kept, bytes. */
  constructor(maxLineBytes: number, opts: LineSplitterOptions = {}) {
    this.max = maxLineBytes;
    this.partsFrom = opts.partsFrom ?? Infinity;
  }

  /** Feeds one chunk; returns the events it completes, in order. */
  push(chunk: Buffer): LineEvent[] {
    const out: LineEvent[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!this.discarding) {
        if (this.size + (end - start) > this.max) {
          out.push({ kind: 'too-long' });
          this.parts = [];
          this.size = 0;
          this.discarding = true;
        } else if (end > start) {
          this.parts.push(chunk.subarray(start, end));
          this.size += end - start;
        }
      }
      if (nl === -1) break;
      if (this.discarding) this.discarding = false;
      else out.push(this.take());
      start = nl + 1;
    }
    return out;
  }

  /** Ends the stream: yields a last line that had no `\n`, if any. */
  end(): LineEvent[] {
    const had = this.size > 0 && !this.discarding;
    const line = this.take();
    this.discarding = false;
    return had ? [line] : [];
  }

  /** The line held so far, as one buffer or (long, in several parts, `partsFrom`) as its parts; the splitter starts a new one. */
  private take(): LineEvent {
    const { parts, size } = this;
    this.parts = [];
    this.size = 0;
    if (parts.length > 1 && size >= this.partsFrom) return { kind: 'long-line', parts, length: size };
    return { kind: 'line', bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts, size) };
  }
}
