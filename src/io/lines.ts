// Splits a byte stream into newline-delimited lines, each bounded in bytes.

/** One event of the line splitter: a complete line (without `\n`), or a line that broke the bound. */
export type LineEvent = { kind: 'line'; bytes: Buffer } | { kind: 'too-long' };

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
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;

  /** @param maxLineBytes longest line kept, bytes. */
  constructor(maxLineBytes: number) {
    this.max = maxLineBytes;
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
      else out.push({ kind: 'line', bytes: this.take() });
      start = nl + 1;
    }
    return out;
  }

  /** Ends the stream: yields a last line that had no `\n`, if any. */
  end(): LineEvent[] {
    const had = this.size > 0 && !this.discarding;
    const bytes = this.take();
    this.discarding = false;
    return had ? [{ kind: 'line', bytes }] : [];
  }

  private take(): Buffer {
    const b = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    return b;
  }
}
