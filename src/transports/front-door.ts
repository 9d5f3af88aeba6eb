// The checks every HTTP front door (fastify, fetch) makes before a dialect sees a request:
// HTTP method, Accept, Content-Type, body decoding and parsing. Neutral: headers and bytes in,
// a parsed value or a catalogue error out.

import { SwitchyardError } from '../core/errors.js';
import type { HeaderBag } from '../core/exchange.js';
import { decodeUtf8, parseBody, type ParseLimits } from '../core/message.js';

function mediaTypes(accept: string | undefined): string[] {
  if (accept === undefined) return ['*/*'];
  return accept.split(',').map((p) => p.split(';')[0].trim().toLowerCase());
}

/** True when an `Accept` header admits `type` (absent Accept admits everything, RFC 9110 §12.5.1). */
export function accepts(accept: string | undefined, type: string): boolean {
  const list = mediaTypes(accept);
  const major = type.split('/')[0];
  return list.some((t) => t === type || t === '*/*' || t === `${major}/*`);
}

/** `application/json`, with no charset or charset=utf-8 (RFC 8259 §8.1: JSON is UTF-8). */
export function isJsonContentType(ct: string | undefined): boolean {
  if (!ct) return false;
  const [base, ...params] = ct.split(';').map((p) => p.trim().toLowerCase());
  if (base !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

/** HTTP methods the MCP path answers (others: 405 with `Allow`). */
export const MCP_METHODS = 'GET, POST, DELETE';

/** Which route a request came in on. */
export type RouteKind = 'mcp' | 'sse' | 'messages';

/**
 * Checks the HTTP method and `Accept` of a request on one of a mount's routes, before its body:
 * the MCP path takes GET, POST and DELETE; a POST must accept both `application/json` and
 * `text/event-stream`; a GET stream must accept `text/event-stream`.
 * @see 2025-11-25 basic/transports#sending-messages-to-the-server (Accept); #listening-for-messages-from-the-server
 * @throws SwitchyardError SWY_ERR_HTTP_METHOD_NOT_ALLOWED (with `Allow`), SWY_ERR_HTTP_NOT_ACCEPTABLE, SWY_ERR_HTTP_CONTENT_TYPE
 */
export function checkHead(route: RouteKind, method: string, headers: HeaderBag): void {
  if (route === 'mcp') {
    if (method !== 'GET' && method !== 'POST' && method !== 'DELETE')
      throw new SwitchyardError('SWY_ERR_HTTP_METHOD_NOT_ALLOWED', { headers: { allow: MCP_METHODS } });
    const accept = headers.get('accept');
    if (method === 'POST' && (!accepts(accept, 'application/json') || !accepts(accept, 'text/event-stream'))) {
      if (!isJsonContentType(headers.get('content-type'))) throw new SwitchyardError('SWY_ERR_HTTP_CONTENT_TYPE');
      throw new SwitchyardError('SWY_ERR_HTTP_NOT_ACCEPTABLE');
    }
    if (method === 'GET' && !accepts(accept, 'text/event-stream')) throw new SwitchyardError('SWY_ERR_HTTP_NOT_ACCEPTABLE');
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
 * Turns a POST body into a JSON value: `Content-Type` must be JSON (415), the bytes UTF-8, the
 * text one JSON value within the parse bounds.
 * @see RFC 8259 §8.1; 2025-11-25 basic/transports#sending-messages-to-the-server
 * @throws SwitchyardError SWY_ERR_HTTP_CONTENT_TYPE, SWY_ERR_REQ_PARSE, SWY_ERR_REQ_INT_TOO_LONG, SWY_ERR_REQ_TOO_DEEP
 */
export function parsePost(headers: HeaderBag, bytes: Uint8Array | undefined, limits: ParseLimits): unknown {
  if (!isJsonContentType(headers.get('content-type'))) throw new SwitchyardError('SWY_ERR_HTTP_CONTENT_TYPE');
  const text = bytes ? decodeUtf8(bytes) : '';
  return parseBody(text, limits).value;
}
