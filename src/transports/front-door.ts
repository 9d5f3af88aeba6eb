// The checks every HTTP front door (fastify, fetch) makes before a dialect sees a request:
// HTTP method, Accept, Content-Type, body decoding and parsing. Neutral: headers and bytes in,
// a parsed value or a catalogue error out.

import { SwitchyardError } from '../core/errors.js';
import type { HeaderBag } from '../core/exchange.js';
import { afterLargeMessage } from '../io/large-message.js';
import { parseJsonBytes } from '../core/json-bytes.js';
import { parseBody, type ParseLimits } from '../core/message.js';
import { decodeBody, parseContentEncoding } from './content-encoding.js';
import { accepts, acceptsExplicitly, isJsonContentType } from './media-type.js';

/**
 * A body read without a `Content-Encoding`: its text, decoded from UTF-8 chunk by chunk (a
 * leading BOM dropped, as `TextDecoder` does), or the reason it is not UTF-8, kept for later so
 * that the checks before the body (Origin, Accept, Content-Type, authentication) still answer
 * first. `bytes` is the body's length in bytes.
 */
export class PostText {
  constructor(
    readonly text: string | undefined,
    readonly bytes: number,
    readonly error?: SwitchyardError,
  ) {}
}

/**
 * A body of at least `LONG_STRING_BYTES` read without a `Content-Encoding`: the chunks it arrived
 * in, in order (each its own copy, never a view of a socket buffer), for `parseJsonBytes`, and
 * its length in bytes.
 */
export class PostChunks {
  constructor(
    readonly chunks: readonly Buffer[],
    readonly bytes: number,
  ) {}
}

/** Which route a request came in on. */
export type RouteKind = 'mcp' | 'sse' | 'messages';

/**
 * Checks the HTTP method and `Accept` of a request on one of a mount's routes, before its body:
 * the MCP path takes GET, POST and DELETE; a POST must accept both `application/json` and
 * `text/event-stream` (RFC 9110 matching: wildcards count, `q=0` refuses); a GET on the MCP path
 * must list `text/event-stream` itself (a wildcard does not open a stream there); the HTTP+SSE
 * stream path, which names its stream, takes any Accept that admits `text/event-stream`.
 * @see 2025-11-25 basic/transports#sending-messages-to-the-server (Accept); #listening-for-messages-from-the-server
 * @param mcpAllow the `Allow` of a 405 on the MCP path: the methods the mount serves there.
 * @throws SwitchyardError SWY_ERR_HTTP_METHOD_NOT_ALLOWED (with `Allow`), SWY_ERR_HTTP_NOT_ACCEPTABLE, SWY_ERR_HTTP_CONTENT_TYPE
 * @see RFC 9110 §15.5.6 (405 carries `Allow`), §10.2.1 (`Allow` lists the methods the resource supports)
 */
export function checkHead(route: RouteKind, method: string, headers: HeaderBag, mcpAllow: string): void {
  if (route === 'mcp') {
    if (method !== 'GET' && method !== 'POST' && method !== 'DELETE')
      throw new SwitchyardError('SWY_ERR_HTTP_METHOD_NOT_ALLOWED', { headers: { allow: mcpAllow } });
    const accept = headers.get('accept');
    if (method === 'POST' && (!accepts(accept, 'application/json') || !accepts(accept, 'text/event-stream'))) {
      if (!isJsonContentType(headers.get('content-type'))) throw new SwitchyardError('SWY_ERR_HTTP_CONTENT_TYPE');
      throw new SwitchyardError('SWY_ERR_HTTP_NOT_ACCEPTABLE');
    }
    // 2025-11-25 basic/transports#listening-for-messages-from-the-server: the GET MUST list text/event-stream.
    if (method === 'GET' && !acceptsExplicitly(accept, 'text/event-stream')) throw new SwitchyardError('SWY_ERR_HTTP_NOT_ACCEPTABLE');
    return;
  }
  if (route === 'sse') {
    if (method !== 'GET') throw new SwitchyardError('SWY_ERR_HTTP_METHOD_NOT_ALLOWED', { headers: { allow: 'GET' } });
    if (!accepts(headers.get('accept'), 'text/event-stream')) throw new SwitchyardError('SWY_ERR_HTTP_NOT_ACCEPTABLE');
    return;
  }
  if (method !== 'POST') throw new SwitchyardError('SWY_ERR_HTTP_METHOD_NOT_ALLOWED', { headers: { allow: 'POST' } });
}

/**
 * The 405 for a request on the MCP path whose method the mount serves there, but that no enabled
 * dialect takes as it comes: a GET or DELETE without `Mcp-Session-Id` while HTTP+SSE is off (the
 * 2025 dialect serves them only within a session), a GET or DELETE with one on a mount without the
 * 2025 dialect. `Allow` is `mcpAllow` without the refused method, so that a 405 never lists the
 * method it refuses (the emulator's rule too): `POST, DELETE` for a GET without a session on the
 * default mount, `GET, POST` for such a DELETE; but a GET refused for its `Mcp-Session-Id` keeps
 * GET (served there without the header, by HTTP+SSE): `GET` on an HTTP+SSE-only mount. The status stays 405 rather than the 400 of a
 * POST without a session: a server that offers no stream answers a GET 405 (2025-11-25
 * basic/transports#listening-for-messages-from-the-server), and an HTTP+SSE client that GETs the
 * URL first (mcp-remote `sse-first`) moves to Streamable HTTP on 404 or 405 only. Without a
 * session the message names the missing header. docs/dialects.md, "GET on the MCP path".
 * @param mcpAllow the mount's methods on the MCP path (`mcpAllowOf`), e.g. `GET, POST, DELETE`.
 * @see RFC 9110 §15.5.6 (405 with `Allow`), §10.2.1; 2025-11-25 basic/transports#session-management
 */
export function mcpMethodRefusal(method: string, headers: HeaderBag, mcpAllow: string): SwitchyardError {
  const served = mcpAllow.split(', ').filter((x) => x !== '');
  const sessionless = served.includes(method) && headers.get('mcp-session-id') === undefined;
  // A GET refused for its Mcp-Session-Id (no 2025 dialect here) is a method the path serves: GET
  // is in `mcpAllow` only through HTTP+SSE then, whose GET without the header opens a stream. So
  // `Allow` keeps it (RFC 9110 §15.5.6: the resource's supported methods; on an HTTP+SSE-only
  // mount, leaving it out gave an empty Allow, "no method allowed"), and the message says which
  // GET is served. docs/dialects.md, "GET on the MCP path".
  const withSession = method === 'GET' && !sessionless && served.includes('GET');
  const allow = withSession ? served.join(', ') : served.filter((x) => x !== method).join(', ');
  const detail = withSession
    ? 'GET with Mcp-Session-Id (this path has no 2025 sessions; a GET without it opens an HTTP+SSE stream)'
    : !sessionless
      ? undefined
      : method === 'GET'
        ? 'GET without Mcp-Session-Id (no stream is offered outside a session)'
        : `${method} without Mcp-Session-Id (there is no session to end)`;
  return new SwitchyardError('SWY_ERR_HTTP_METHOD_NOT_ALLOWED', { headers: { allow }, ...(detail ? { detail } : {}) });
}

/**
 * The first transfer coding other than `chunked` that a `Transfer-Encoding` value lists (its
 * parameters and case dropped), or undefined when there is none. node:http (and a fetch host)
 * undoes `chunked` only: any other coding would be left on the body unnoticed.
 * @param value the field's value, several field lines joined with `", "` (RFC 9110 §5.3); absent: none.
 * @see RFC 9112 §6.1 (a transfer coding the server does not understand: 501), §7 (the codings)
 */
export function unsupportedTransferCoding(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  for (const item of value.split(',')) {
    const coding = item.split(';', 1)[0].trim().toLowerCase();
    if (coding !== '' && coding !== 'chunked') return coding;
  }
  return undefined;
}

/**
 * Turns a POST body into a JSON value, synchronously, for a front door that does not decode
 * content codings: `Content-Type` must be JSON (415; a malformed value too), the body must carry
 * no `Content-Encoding` but identity (415 with `Accept-Encoding: identity`: encoded bytes are
 * never parsed as if they were plain), the bytes UTF-8, the text one JSON value within the parse bounds.
 * @see RFC 8259 §8.1; RFC 9110 §8.3 (Content-Type), §15.5.16 (415 for a coding); 2025-11-25 basic/transports#sending-messages-to-the-server
 * @throws SwitchyardError SWY_ERR_HTTP_CONTENT_TYPE, SWY_ERR_HTTP_CONTENT_ENCODING, SWY_ERR_REQ_PARSE, SWY_ERR_REQ_INT_TOO_LONG, SWY_ERR_REQ_TOO_DEEP
 */
export function parsePost(headers: HeaderBag, bytes: Uint8Array | undefined, limits: ParseLimits): unknown {
  if (!isJsonContentType(headers.get('content-type'))) throw new SwitchyardError('SWY_ERR_HTTP_CONTENT_TYPE');
  const coding = headers.get('content-encoding');
  if (coding !== undefined && parseContentEncoding(coding).length > 0)
    throw new SwitchyardError('SWY_ERR_HTTP_CONTENT_ENCODING', { detail: 'this endpoint takes identity only', headers: { 'Accept-Encoding': 'identity' } });
  return parseText(bytes, limits);
}

/**
 * The bounds a POST body is parsed with: the parse limits of `limits` (integer digits, id bytes,
 * nesting) and a body size, `maxBodyBytes` (bytes; a mount's own or the listener's). Four fields,
 * not a copy of the whole `Limits`: both front doors call it.
 */
export function postLimits(limits: ParseLimits, maxBodyBytes: number): ParseLimits & { maxBodyBytes: number } {
  return { maxIntegerDigits: limits.maxIntegerDigits, maxIdBytes: limits.maxIdBytes, maxJsonDepth: limits.maxJsonDepth, maxBodyBytes };
}

/**
 * Turns a POST body into a JSON value as `parsePost` does, but first decodes its
 * `Content-Encoding` (gzip, x-gzip, deflate, br, several in order) within `maxBodyBytes` of
 * decoded size, on the thread pool (`decodeBody`). A `PostText` (read without a coding, already
 * decoded from UTF-8 by `readPostBody`) is parsed as it is, or refused with its decoding error;
 * `PostChunks` (a long body read without a coding) is parsed from its chunks (`parseJsonBytes`).
 * @see RFC 8259 §8.1; RFC 9110 §8.3 (Content-Type), §8.4 (Content-Encoding); 2025-11-25 basic/transports#sending-messages-to-the-server
 * @throws SwitchyardError SWY_ERR_HTTP_CONTENT_TYPE, SWY_ERR_HTTP_CONTENT_ENCODING (415, with
 *   `Accept-Encoding`), SWY_ERR_HTTP_BODY_TOO_LARGE (decoded), SWY_ERR_REQ_PARSE, SWY_ERR_REQ_INT_TOO_LONG, SWY_ERR_REQ_TOO_DEEP
 */
export async function decodePost(
  headers: HeaderBag,
  bytes: Uint8Array | PostText | PostChunks | undefined,
  limits: ParseLimits & { maxBodyBytes: number },
): Promise<unknown> {
  if (!isJsonContentType(headers.get('content-type'))) throw new SwitchyardError('SWY_ERR_HTTP_CONTENT_TYPE');
  if (bytes instanceof PostText) {
    if (bytes.error) throw bytes.error;
    return parseBody(bytes.text ?? '', limits).value;
  }
  if (bytes instanceof PostChunks) {
    const value = parseJsonBytes(bytes.chunks, limits).value;
    afterLargeMessage(bytes.bytes);
    return value;
  }
  const coding = headers.get('content-encoding');
  return parseText(bytes && coding !== undefined ? await decodeBody(bytes, coding, limits.maxBodyBytes) : bytes, limits);
}

function parseText(bytes: Uint8Array | undefined, limits: ParseLimits): unknown {
  if (!bytes) return parseBody('', limits).value;
  const value = parseJsonBytes(bytes, limits).value;
  // A decoded (gzip, br, …) body of a mebibyte or more, as a long one read without a coding.
  afterLargeMessage(bytes.length);
  return value;
}
