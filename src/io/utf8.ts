// Streaming UTF-8 decoding: byte chunks to text, with characters split across chunks kept whole.

import { SwitchyardError } from '../core/errors.js';

/** Options of `createUtf8Stream`. */
export interface Utf8StreamOptions {
  /**
   * Refuse invalid UTF-8 (throw) instead of replacing each bad sequence with U+FFFD, the
   * WHATWG decoder's default. Default false.
   */
  fatal?: boolean;
  /** The detail of the `SWY_ERR_REQ_PARSE` a fatal stream throws (default `invalid UTF-8`). */
  detail?: string;
}

/** A stateful decoder for one byte stream. */
export interface Utf8Stream {
  /**
   * Decodes one chunk. Bytes of a character the chunk ends inside (at most 3) are held until
   * the next chunk completes it.
   * @throws SwitchyardError SWY_ERR_REQ_PARSE on invalid UTF-8 when `fatal`
   */
  write(chunk: Uint8Array): string;
  /**
   * Ends the stream: returns what is left (U+FFFD for a character cut off at the end, or a
   * throw when `fatal`). The stream can then be reused from a clean state.
   * @throws SwitchyardError SWY_ERR_REQ_PARSE on a truncated character when `fatal`
   */
  end(): string;
}

/**
 * Creates a streaming UTF-8 decoder over `TextDecoder` with `stream: true`. A leading BOM is
 * dropped once (WHATWG Encoding "UTF-8 decode"; the SSE stream format and RFC 8259 §8.1 both
 * allow ignoring it).
 * @see WHATWG Encoding §10.2.1 (TextDecoder, stream option); RFC 3629 (UTF-8)
 */
export function createUtf8Stream(options: Utf8StreamOptions = {}): Utf8Stream {
  const fatal = options.fatal ?? false;
  let decoder = new TextDecoder('utf-8', { fatal });
  const guard = (f: () => string): string => {
    try {
      return f();
    } catch (cause) {
      // A fatal TextDecoder is left mid-sequence after a throw; start the next use clean.
      decoder = new TextDecoder('utf-8', { fatal });
      throw new SwitchyardError('SWY_ERR_REQ_PARSE', { detail: options.detail ?? 'invalid UTF-8', cause });
    }
  };
  return {
    write: (chunk) => guard(() => decoder.decode(chunk, { stream: true })),
    end: () => guard(() => decoder.decode()),
  };
}
