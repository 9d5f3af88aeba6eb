// The one error catalogue: every error Switchyard sends to a peer or reports locally.
//
// Each entry is an object literal: a stable code `SWY_ERR_<AREA>_<WHAT>`, a message, the HTTP status used when the
// error ends an HTTP exchange, the JSON-RPC error code, and who is at fault. `docs/errors.md`
// has one row per code and `test/invariants/errors-doc.test.ts` keeps the two in step.
// A retired code is never reused.

import type { CoreLog } from './exchange.js';
import { authority } from './url-text.js';

/** Who caused an error: the downstream client, an upstream MCP server, or Switchyard itself. */
export type Fault = 'client' | 'upstream' | 'internal';

/**
 * One catalogue entry.
 * - `status`: HTTP status when the error ends an HTTP exchange (errors answered in-band on an
 *   open SSE stream or inside a 2025-era JSON reply travel with the exchange's own status).
 * - `rpc`: JSON-RPC 2.0 error code (JSON-RPC 2.0 §5.1; MCP 2026-07-28 basic#error-codes).
 * - `wire`: false for local errors (config, CLI, startup) that never reach a peer.
 */
export interface CatalogueEntry {
  readonly status: number;
  readonly rpc: number;
  readonly fault: Fault;
  readonly message: string;
  /** Absent for wire errors; `false` for local errors (config, CLI, startup). */
  readonly wire?: false;
  /**
   * Seconds to send in `Retry-After` with this error, unless the error carries its own headers:
   * the 503s of a passing overload, so that clients and load balancers back off and retry.
   * @see RFC 9110 §10.2.3 (Retry-After with 503)
   */
  readonly retryAfterS?: number;
  readonly when: string;
  readonly action: string;
}

/** JSON-RPC 2.0 and MCP error codes used below (JSON-RPC 2.0 §5.1; MCP 2026-07-28 basic#error-codes). */
export const RpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  SERVER_ERROR: -32000,
  SESSION_NOT_FOUND: -32001,
  RESOURCE_NOT_FOUND_BEFORE_2026: -32002,
  HEADER_MISMATCH: -32020,
  MISSING_CLIENT_CAPABILITY: -32021,
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
} as const;

const R = RpcCode;

/** The catalogue, keyed by code. Matching is by code, never by message text. */
export const Catalogue = {
  // --- request syntax (every transport) ---
  SWY_ERR_REQ_PARSE: {
    status: 400,
    rpc: R.PARSE_ERROR,
    fault: 'client',
    message: 'Parse error: invalid JSON',
    when: 'The body is not valid UTF-8, or not JSON.',
    action: 'Send one well-formed JSON value in UTF-8.',
  },
  SWY_ERR_REQ_INT_TOO_LONG: {
    status: 400,
    rpc: R.PARSE_ERROR,
    fault: 'client',
    message: 'Parse error: integer literal longer than the limit',
    when: 'A number literal has more integer digits than `maxIntegerDigits` (64).',
    action: 'Send shorter numbers; ids must fit int64.',
  },
  SWY_ERR_REQ_INVALID: {
    status: 400,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Invalid Request: not a JSON-RPC 2.0 message',
    when: "The JSON is not a JSON-RPC 2.0 request, notification or response (a response's `result` must be an object, its `error` an object with an integer `code` and a string `message`, never both).",
    action: 'Send `{"jsonrpc":"2.0","method":…}`.',
  },
  SWY_ERR_REQ_BAD_ID: {
    status: 400,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Invalid Request: id must be a string or an integer in the int64 range',
    when: 'The request id is null, fractional, too large, or a string over `maxIdBytes`; the message ends with the configured bound (`: a string id is at most 256 bytes`).',
    action: 'Use a short string or a 64-bit integer id.',
  },
  SWY_ERR_REQ_BAD_PROGRESS_TOKEN: {
    status: 400,
    rpc: R.INVALID_PARAMS,
    fault: 'client',
    message: 'Invalid params: progressToken must be a string or an integer in the int64 range',
    when: '`params._meta.progressToken` breaks the same bounds as ids; the message ends with the configured bound (`: a string token is at most 256 bytes`).',
    action: 'Use a short string or a 64-bit integer token.',
  },
  SWY_ERR_REQ_DUPLICATE_ID: {
    status: 200,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Invalid Request: id is already in use by a request in flight',
    when: 'A session sends a request whose id an unfinished request of the same session already uses, or an upstream sends a server request whose id one of its open server requests already uses (the upstream gets this error).',
    action: 'Use a new id for each request.',
  },
  SWY_ERR_REQ_TOO_DEEP: {
    status: 400,
    rpc: R.PARSE_ERROR,
    fault: 'client',
    message: 'Parse error: nesting deeper than the limit',
    when: 'Arrays and objects nest deeper than `maxJsonDepth` (128).',
    action: 'Flatten the message.',
  },
  SWY_ERR_REQ_SCHEMA: {
    status: 400,
    rpc: R.INVALID_PARAMS,
    fault: 'client',
    message: 'Invalid message: does not match the protocol schema',
    when: "Strict `reject` mode: a client message fails its era's JSON schema (-32600 for the envelope, -32602 for params).",
    action: 'Fix the message at the JSON path given.',
  },
  SWY_ERR_REQ_BATCH_NOT_ALLOWED: {
    status: 400,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Invalid Request: batches are only allowed in protocol revision 2025-03-26',
    when: 'A JSON array was posted outside a 2025-03-26 session.',
    action: 'Send one message per POST.',
  },
  SWY_ERR_REQ_BATCH_INITIALIZE: {
    status: 400,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Invalid Request: the initialize request must not be part of a JSON-RPC batch',
    when: 'A JSON array holding an `initialize` request was posted without a session (HTTP) or before one (stdio): 2025-03-26 basic/lifecycle says the initialize request MUST NOT be part of a batch. Inside a 2025-03-26 session, a batched `initialize` gets its own error response (`SWY_ERR_SESSION_ALREADY_INITIALIZED`).',
    action: 'Send `initialize` alone; batch later messages of a 2025-03-26 session.',
  },
  SWY_ERR_REQ_BATCH_TOO_LARGE: {
    status: 400,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Invalid Request: batch has more messages than the limit',
    when: 'A 2025-03-26 batch exceeds `maxBatchMessages`.',
    action: 'Send smaller batches.',
  },
  SWY_ERR_REQ_PARAMS: {
    status: 200,
    rpc: R.INVALID_PARAMS,
    fault: 'client',
    message: 'Invalid params',
    when: 'The method exists but its params are wrong (unknown tool, missing argument).',
    action: 'Fix the params; the message says which.',
  },
  SWY_ERR_REQ_METHOD_NOT_FOUND: {
    status: 404,
    rpc: R.METHOD_NOT_FOUND,
    fault: 'client',
    message: 'Method not found',
    when: "The method is unknown in the client's era, or gated on a capability the server lacks.",
    action: 'Call a method the era defines (see server/discover or initialize).',
  },
  SWY_ERR_REQ_RESOURCE_NOT_FOUND: {
    status: 200,
    rpc: R.INVALID_PARAMS,
    fault: 'client',
    message: 'Resource not found',
    when: 'resources/read names a URI the upstream does not have (-32002 toward eras before 2026-07-28).',
    action: 'List resources first.',
  },
  SWY_ERR_REQ_LOG_LEVEL: {
    status: 200,
    rpc: R.INVALID_PARAMS,
    fault: 'client',
    message: 'Invalid params: unknown log level',
    when: "A log level is not one of RFC 5424's eight names.",
    action: 'Use debug, info, notice, warning, error, critical, alert or emergency.',
  },
  SWY_ERR_REQ_INPUT_ROUNDS: {
    status: 200,
    rpc: R.INTERNAL_ERROR,
    fault: 'upstream',
    message: 'Too many input_required rounds',
    when: 'An upstream asked for client input more than `maxInputRounds` times for one request.',
    action: 'Fix the upstream tool; it never completes.',
  },
  SWY_ERR_REQ_INPUT_UNSUPPORTED: {
    status: 200,
    rpc: R.INVALID_PARAMS,
    fault: 'client',
    message: "Client cannot answer the server's input request",
    when: 'The server needs input (elicitation, sampling, roots) that this client did not declare or cannot receive here.',
    action: 'Declare the capability, or call over a stream that can carry server requests.',
  },
  // --- HTTP framing ---
  SWY_ERR_HTTP_BODY_TOO_LARGE: {
    status: 413,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Request body exceeds the limit',
    when: 'The body is larger than `maxBodyBytes` (2 MB).',
    action: 'Send smaller messages.',
  },
  SWY_ERR_HTTP_CONTENT_TYPE: {
    status: 415,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Unsupported Media Type: Content-Type must be application/json',
    when: 'A POST carries another Content-Type.',
    action: 'Send `Content-Type: application/json`.',
  },
  SWY_ERR_HTTP_NOT_ACCEPTABLE: {
    status: 406,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Not Acceptable: client must accept application/json and text/event-stream',
    when: "A POST's Accept lacks one of the two types (or a GET's lacks text/event-stream).",
    action: 'Send `Accept: application/json, text/event-stream`.',
  },
  SWY_ERR_HTTP_METHOD_NOT_ALLOWED: {
    status: 405,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Method not allowed',
    when: 'An HTTP method the path does not serve (GET without a session when HTTP+SSE is off, PUT, …).',
    action: 'POST to the MCP path; enable --legacy-sse for HTTP+SSE clients.',
  },
  SWY_ERR_HTTP_ORIGIN_FORBIDDEN: {
    status: 403,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Forbidden: Origin not allowed',
    when: 'An `Origin` header is present and not on the allowlist, has userinfo, or is malformed.',
    action: 'Add the origin with --allowed-origin.',
  },
  SWY_ERR_HTTP_HOST_FORBIDDEN: {
    status: 403,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Forbidden: Host not allowed',
    when: '`allowedHosts` is set and `Host` is not on it.',
    action: 'Add the host with --allowed-host.',
  },
  SWY_ERR_HTTP_FRAMING: {
    status: 400,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Invalid HTTP request',
    when: "Node's HTTP parser refused the request before routing: headers or body too slow (408), headers too large (431: over Node's `maxHeaderSize`, 16 KiB by default, for the request line and every header together, a bearer token of about 16,000 characters included), or bad framing (400).",
    action: 'Send a well-formed HTTP/1.1 request in time.',
  },
  SWY_ERR_HTTP_EXPECTATION_FAILED: {
    status: 417,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Expectation failed',
    when: 'An `Expect` header other than `100-continue`, the only expectation HTTP defines (RFC 9110 §10.1.1); the standalone listener answers it before routing.',
    action: 'Send no Expect header, or Expect: 100-continue.',
  },
  SWY_ERR_HTTP_CONNECT_NOT_ALLOWED: {
    status: 405,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Method not allowed: CONNECT (this server is not a proxy)',
    when: 'A `CONNECT` request: it asks for a tunnel, which only a proxy gives (RFC 9110 §9.3.6). The standalone listener answers it before routing, with `Allow` naming the methods its endpoints serve, and closes the connection.',
    action: 'Send MCP requests to the MCP path itself; if a client tunnels through Switchyard, unset the HTTP_PROXY / HTTPS_PROXY that names it.',
  },
  SWY_ERR_HTTP_TRANSFER_CODING: {
    status: 501,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Not Implemented: unsupported Transfer-Encoding',
    when: 'A request whose `Transfer-Encoding` lists a transfer coding other than `chunked` (gzip, deflate, compress, identity, …): RFC 9112 §6.1 has a server answer 501 for a transfer coding it does not understand. Answered before the body is read, with `Connection: close`.',
    action: 'Send the body with Content-Length or `Transfer-Encoding: chunked` alone; compress it with Content-Encoding instead.',
  },
  SWY_ERR_HTTP_NOT_FOUND: {
    status: 404,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Not found',
    when: 'A path Switchyard does not serve, HTTP+SSE paths included while that dialect is off.',
    action:
      "Use a mount's MCP path (`/NAME/mcp` with a config file, else /mcp). A mount's HTTP+SSE paths (`/NAME/sse`, `/NAME/messages`) exist only with `dialects.legacySse: true` (`--legacy-sse`): the start-up line names them when they do.",
  },
  // --- stdio front door (2025-11-25 basic/transports#stdio) ---
  SWY_ERR_STDIO_LINE_TOO_LONG: {
    status: 413,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Invalid Request: line exceeds the limit',
    when: 'A stdio line is longer than `maxLineBytes` (2,000,000 bytes); it is refused with id null before decoding and the rest of the line is discarded.',
    action: 'Send smaller messages, one per line.',
  },
  SWY_ERR_STDIO_WRITE_STALLED: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'stdio client stopped reading',
    when: 'A write to stdout stayed blocked past `writeTimeoutMs` (5,000 ms), or more than `maxStreamBufferBytes` queued behind it; the stdio transport ended and its requests were cancelled.',
    action: 'Read stdout continuously.',
    wire: false,
  },
  // --- 2026-07-28 stateless validation (stateless-2026-07-28 §4.2) ---
  SWY_ERR_MODERN_META: {
    status: 400,
    rpc: R.INVALID_PARAMS,
    fault: 'client',
    message: 'Invalid params: missing or malformed protocol _meta',
    when: 'A 2026-07-28 request lacks `_meta` protocolVersion or clientCapabilities, or they are malformed.',
    action: 'Send the REQUIRED `_meta` keys on every request.',
  },
  SWY_ERR_MODERN_HEADER_MISMATCH: {
    status: 400,
    rpc: R.HEADER_MISMATCH,
    fault: 'client',
    message: 'Header mismatch',
    when: 'A mirrored header (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*) is missing, invalid or differs from the body.',
    action: 'Mirror the body into the headers exactly.',
  },
  SWY_ERR_MODERN_VERSION: {
    status: 400,
    rpc: R.UNSUPPORTED_PROTOCOL_VERSION,
    fault: 'client',
    message: 'Unsupported protocol version',
    when: 'The requested protocol version is not served; `data.supported` lists those that are.',
    action: 'Retry with a version from `data.supported`.',
  },
  SWY_ERR_MODERN_CAPABILITY: {
    status: 400,
    rpc: R.MISSING_CLIENT_CAPABILITY,
    fault: 'client',
    message: 'Missing required client capability',
    when: 'The request needs a client capability it did not declare (`data.requiredCapabilities`).',
    action: 'Declare the capability in `_meta`.',
  },
  // --- 2025-era and HTTP+SSE sessions ---
  SWY_ERR_SESSION_REQUIRED: {
    status: 400,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Bad Request: Mcp-Session-Id header is required',
    when: 'A 2025-era request other than initialize carries no session (or an HTTP+SSE POST no `sessionId`).',
    action: 'Send initialize first and echo the session id.',
  },
  SWY_ERR_SESSION_ID_MALFORMED: {
    status: 400,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Bad Request: Mcp-Session-Id header must carry exactly one session id',
    when: 'A 2025-era request carries `Mcp-Session-Id` on several field lines (joined `a, b` or `a,b`), or a value no session id has: empty, with a comma (no id this gateway issues has one), or with a character outside visible ASCII 0x21–0x7E (2025-11-25 basic/transports#session-management).',
    action: 'Send the one session id the initialize answer named, on one field line.',
  },
  SWY_ERR_SESSION_QUERY_REQUIRED: {
    status: 400,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Bad Request: sessionId query parameter is required',
    when: 'An HTTP+SSE POST carries no `sessionId` query parameter, or more than one (the detail then says `exactly one`).',
    action: 'POST to the URI the `endpoint` event named.',
  },
  SWY_ERR_SESSION_NOT_FOUND: {
    status: 404,
    rpc: R.SESSION_NOT_FOUND,
    fault: 'client',
    message: 'Session not found',
    when: 'The session id is unknown, expired or deleted.',
    action: 'Start over with a new initialize.',
  },
  SWY_ERR_SESSION_LIMIT: {
    status: 503,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'Too many sessions',
    when: 'The dialect holds `maxSessions` live sessions, or an HTTP upstream cannot open one more upstream session (its pool holds `maxSessions`, each with subscribers; the streams of an HTTP+SSE upstream hold every place).',
    action: 'Retry later; end unused sessions with DELETE, and listens no longer needed.',
  },
  SWY_ERR_SESSION_CLIENT_LIMIT: {
    status: 429,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Too many sessions: this client holds too many sessions',
    when: 'The client (the verified principal on a mount with `auth`, else the remote address, behind `trustProxy` the forwarded one) already holds `maxSessionsPerClient` live sessions of this dialect on this mount and replica.',
    action:
      'End unused sessions (DELETE, or close the HTTP+SSE stream) before opening more; raise `maxSessionsPerClient` when many clients share one address (NAT, an untrusted proxy).',
  },
  SWY_ERR_SESSION_NOT_INITIALIZED: {
    status: 400,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Bad Request: Server not initialized',
    when: 'A request other than initialize or ping arrives before initialize.',
    action: 'Send initialize first.',
  },
  SWY_ERR_SESSION_ALREADY_INITIALIZED: {
    status: 400,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Invalid Request: Server already initialized',
    when: 'initialize on a session that is initialized, or inside a batch.',
    action: 'Start a new session without the header.',
  },
  SWY_ERR_SESSION_VERSION_HEADER: {
    status: 400,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Bad Request: Unsupported protocol version',
    when: 'MCP-Protocol-Version names a revision this endpoint does not serve (2025-06-18 basic/transports#protocol-version-header).',
    action: 'Send the negotiated version.',
  },
  SWY_ERR_SESSION_ENDED: {
    status: 200,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Session ended before the request completed',
    when: 'The session was deleted (DELETE) or closed at shutdown while one of its requests ran; the request is answered with this error, never left without a response.',
    action: 'Keep the session until its requests are answered; start a new session to retry.',
  },
  SWY_ERR_SESSION_STREAM_CONFLICT: {
    status: 409,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Conflict: only one GET stream is allowed per session',
    when: 'A second GET stream on a session that has one open.',
    action: 'Close the first stream.',
  },
  SWY_ERR_SESSION_BAD_EVENT_ID: {
    status: 400,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Bad Request: unknown Last-Event-ID',
    when: 'Last-Event-ID names no event the session still holds.',
    action: 'Reissue the request.',
  },
  SWY_ERR_SESSION_WRONG_TRANSPORT: {
    status: 400,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Bad Request: session uses a different transport',
    when: 'A session id of one transport was sent to the other.',
    action: 'Use the transport that created the session.',
  },
  // --- admission and bounds ---
  SWY_ERR_ADMISSION_BUSY: {
    status: 503,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'Server busy: too many requests in flight',
    when: '`maxConcurrent` requests run and `maxQueued` wait.',
    action: 'Retry with backoff.',
  },
  SWY_ERR_ADMISSION_PRINCIPAL_BUSY: {
    status: 429,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Too many requests: this principal has too many requests in flight',
    when: 'The verified principal already has `maxConcurrentPerPrincipal` requests running or waiting on this mount.',
    action: 'Wait for earlier requests to finish, then retry with backoff; raise `maxConcurrentPerPrincipal` if one principal serves many clients.',
  },
  SWY_ERR_ADMISSION_SESSION_BUSY: {
    status: 429,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Too many requests: this session has too many requests in flight',
    when: 'A 2025-era session (Streamable HTTP or HTTP+SSE, or the stdio front door) already has 256 of its requests in flight; refused before admission, whatever room the gateway has.',
    action: 'Wait for answers to earlier requests of the session, then retry with backoff.',
  },
  SWY_ERR_SESSION_PENDING_LIMIT: {
    status: 429,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Too many requests: the client has too many server requests awaiting its answers',
    when: "An upstream asks a 2025-era session (Streamable HTTP or HTTP+SSE, or the stdio front door) one more server-to-client request (elicitation, sampling, roots) while 64 of the session's wait for the client's answers; the upstream gets this error as the answer, the client is not sent the request.",
    action: 'Client: answer (or cancel) the server requests it was sent. Upstream: retry with backoff, or ask fewer at once.',
  },
  SWY_ERR_SUBSCRIPTION_LIMIT: {
    status: 503,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'Too many subscriptions',
    when: '`maxSubscriptions` listen streams are open.',
    action: 'Close a subscription first.',
  },
  SWY_ERR_SUBSCRIPTION_CLIENT_LIMIT: {
    status: 429,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Too many subscriptions: this client holds too many listen streams',
    when: 'The client (the verified principal on a mount with `auth`, else the remote address, behind `trustProxy` the forwarded one) already holds `maxSubscriptionsPerClient` open `subscriptions/listen` streams on this mount and replica.',
    action:
      'Close a listen stream first (one listen can carry every notification filter); raise `maxSubscriptionsPerClient` when many clients share one address.',
  },
  SWY_ERR_ADMISSION_SHUTTING_DOWN: {
    status: 503,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'Server is shutting down',
    when: 'A request arrives after SIGINT/SIGTERM (the retry of a 2026-07-28 call held here, with its `requestState`, is still served until `shutdownGraceMs` ends); a request still running when the grace ends is cut (`: request aborted`), and a call still held then is cancelled (`: held call cancelled`).',
    action:
      'Retry on another instance. A 2026-07-28 retry whose call the drain cancelled cannot resume there: send the call again from the start, without `requestState`.',
  },
  SWY_ERR_REQ_DEADLINE: {
    status: 504,
    rpc: R.SERVER_ERROR,
    fault: 'upstream',
    message: 'Request timed out',
    when: 'The request ran past `requestTimeoutMs`; the upstream was told to cancel.',
    action: 'Raise the deadline or fix the slow upstream.',
  },
  SWY_ERR_REQ_CANCELLED: {
    status: 499,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Request cancelled',
    when: 'The client cancelled the request; nothing is sent on the wire for it.',
    action: 'None.',
  },
  // --- upstream faults ---
  SWY_ERR_UPSTREAM_UNAVAILABLE: {
    status: 502,
    rpc: R.SERVER_ERROR,
    fault: 'upstream',
    message: 'Upstream unavailable',
    when: 'The upstream process is not running or exited with the request in flight, or a config reload removed or replaced the mount while the request still ran past `shutdownGraceMs`, or a 2026-07-28 retry names a call held on an upstream instance that a reload replaced (the call was cancelled at the reload).',
    action:
      "Check the upstream's logs; Switchyard restarts stdio children with backoff. After a reload, send a cancelled 2026-07-28 call again from the start, without `requestState`.",
  },
  SWY_ERR_UPSTREAM_PROTOCOL: {
    status: 502,
    rpc: R.INTERNAL_ERROR,
    fault: 'upstream',
    message: 'Upstream protocol error',
    when: 'The upstream sent something that is not valid MCP for its era: among others, a result that is not a JSON object, a list whose items are not objects with their names, an error that is not a JSON-RPC error object (an integer code and a string message), a response with both result and error, or neither (JSON-RPC 2.0 §5), or a response inside a JSON array (a batch) to a request sent alone (JSON-RPC 2.0 §6).',
    action: 'Fix or upgrade the upstream.',
  },
  SWY_ERR_UPSTREAM_OVERLOADED: {
    status: 503,
    rpc: R.SERVER_ERROR,
    fault: 'upstream',
    message: 'Upstream overloaded: too many requests in flight',
    when: 'More than `maxInFlightPerUpstream` requests wait on one upstream, or a stdio child has not read `maxUpstreamMessageBytes` of what was written to its stdin.',
    action: 'Retry with backoff.',
  },
  // --- internal ---
  SWY_ERR_INTERNAL_FAULT: {
    status: 500,
    rpc: R.INTERNAL_ERROR,
    fault: 'internal',
    message: 'Internal error',
    when: 'A fault in Switchyard itself; the log has the stack. Also a local error that reached a request (in the library, a config check made when the gateway assembles, such as a policy rule whose CEL does not compile): the client gets this, the log has the local error once.',
    action: 'Read the log line: a local error names its code and config paths; otherwise report it with the log line.',
  },
  // --- local (never on the wire) ---
  SWY_ERR_CONFIG_INVALID: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'Invalid configuration',
    when: 'The config file or flags fail the schema; every failing path is listed.',
    action: 'Fix the listed paths.',
    wire: false,
  },
  SWY_ERR_CLI_USAGE: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'Invalid command line',
    when: 'Unknown flag or bad flag value.',
    action: 'See `switchyard --help`.',
    wire: false,
  },
  SWY_ERR_LISTEN_FAILED: {
    status: 0,
    rpc: 0,
    fault: 'internal',
    message: 'Cannot listen',
    when: 'The host/port cannot be bound.',
    action: 'Pick another port.',
    wire: false,
  },
  SWY_ERR_LOG_FILE_UNAVAILABLE: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'Cannot open the log file',
    when: 'The file `switchyard emulate --log` names cannot be created or opened for appending (a directory that cannot be made, no permission); nothing listens.',
    action: 'Name a file in a writable directory.',
    wire: false,
  },
  // --- HTTP edge (authority, Content-Encoding, forwarded headers, connection guards) ---
  SWY_ERR_HTTP_HOST_INVALID: {
    status: 400,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Bad Request: invalid or repeated Host',
    when: 'More than one `Host` field line, a `Host` (or absolute-form target authority) that is not a valid `host[:port]`, or no `Host` while `allowedHosts` is set (RFC 9112 §3.2).',
    action: 'Send exactly one `Host: host[:port]`.',
  },
  SWY_ERR_HTTP_CONTENT_ENCODING: {
    status: 415,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Unsupported Media Type: unsupported Content-Encoding',
    when: 'The body carries a `Content-Encoding` other than identity, gzip, x-gzip, deflate and br, or more than 4 codings; the answer carries `Accept-Encoding: gzip, deflate, br` (RFC 9110 §15.5.16).',
    action: 'Send the body uncompressed or in a listed coding.',
  },
  SWY_ERR_HTTP_FORWARDED_INVALID: {
    status: 400,
    rpc: R.INVALID_REQUEST,
    fault: 'client',
    message: 'Bad Request: invalid X-Forwarded-* header',
    when: 'A trusted proxy sent an `X-Forwarded-Proto` other than http or https, an `X-Forwarded-Host` that is not a valid `host[:port]`, or an `X-Forwarded-Prefix` that is not a clean absolute path.',
    action: "Fix the proxy's X-Forwarded-* headers (or trustProxy).",
  },
  SWY_ERR_HTTP_CONNECTION_LIMIT: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'Connection closed at accept',
    when: 'A TCP connection arrived while `maxConnectionsPerAddress` (256) connections from its address, or `maxConnections` (1024) in all, were open; it was closed before anything was read.',
    action: 'Reuse connections; raise the limits when many clients share one address (NAT, a proxy).',
    wire: false,
  },
  SWY_ERR_HTTP_FIRST_BYTE_TIMEOUT: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'Connection closed: no byte received',
    when: 'A TCP connection sent nothing within `firstByteTimeoutMs` (2,000 ms) of being accepted; it was closed.',
    action: 'Send the request as soon as the connection is open.',
    wire: false,
  },
  // --- authentication (src/auth; RFC 6750 §3, RFC 9728 §5.1; docs/security.md) ---
  SWY_ERR_AUTH_REQUIRED: {
    status: 401,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Unauthorized: an access token is required',
    when: 'The mount requires authentication and the request has no `Authorization: Bearer` credential (or another scheme); `WWW-Authenticate` names the protected resource metadata (RFC 9728 §5.1).',
    action: 'Follow `resource_metadata` to the authorization server, obtain a token for this resource and send `Authorization: Bearer <token>`.',
  },
  SWY_ERR_AUTH_INVALID_REQUEST: {
    status: 400,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Bad Request: malformed Authorization header',
    when: 'The `Authorization` header uses the Bearer scheme but is not exactly one RFC 6750 §2.1 `b64token` (empty, several credentials, stray characters); `error="invalid_request"`.',
    action: 'Send exactly `Authorization: Bearer <token>`, once.',
  },
  SWY_ERR_AUTH_TOKEN_TOO_LONG: {
    status: 400,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Bad Request: bearer token longer than the limit',
    when: 'The bearer token is longer than `maxTokenChars` (16,384 characters); refused before any verification, `error="invalid_request"`. Seen where the host\'s header bound lets such a token through (the fastify plugin, `handle`, `fetch`, or `node --max-http-header-size`); the standalone listener, at Node\'s default 16 KiB for all headers, answers 431 `SWY_ERR_HTTP_FRAMING` first.',
    action: 'Use a shorter token (ask the authorization server for fewer claims).',
  },
  SWY_ERR_AUTH_INVALID_TOKEN: {
    status: 401,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Unauthorized: invalid access token',
    when: 'The token is expired, not yet valid, badly signed, signed with a refused algorithm, from another issuer, for another audience, inactive at introspection, or an unknown API key; `error="invalid_token"`.',
    action: 'Obtain a new token from the authorization server named in the protected resource metadata, for this resource (RFC 8707 `resource`).',
  },
  SWY_ERR_AUTH_INSUFFICIENT_SCOPE: {
    status: 403,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Forbidden: the access token lacks a required scope',
    when: 'The token is valid but does not grant every scope the mount requires (counting the scopes its own imply under `auth.bearer.scopeImplies`); `error="insufficient_scope"` and `scope` lists them all.',
    action: 'Request a token with the scopes in the challenge (step-up authorization).',
  },
  SWY_ERR_AUTH_ISSUER_UNAVAILABLE: {
    status: 503,
    rpc: R.SERVER_ERROR,
    fault: 'upstream',
    message: 'Authorization server unavailable',
    when: "The issuer's metadata, JWKS or introspection endpoint failed, timed out (`timeoutMs`), answered more than `maxResponseBytes` (1 MiB) or answered something unusable; `Retry-After` says when discovery is tried again.",
    action: 'Check that the issuer is reachable from Switchyard and that `auth.bearer.issuer` is its exact issuer identifier; retry after the delay.',
  },
  SWY_ERR_AUTH_INTROSPECTION_BUSY: {
    status: 503,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'Authorization server busy: too many introspection requests in flight',
    when: 'An opaque token that is neither cached nor already being introspected arrived while `auth.bearer.introspection.maxConcurrent` (32) introspection requests of that `auth` were in flight; refused at once, not queued, and the token was not judged (no `WWW-Authenticate`).',
    action: 'Retry after `Retry-After`; if legitimate traffic meets it, raise `maxConcurrent` or use JWT access tokens, which need no introspection.',
  },
  SWY_ERR_AUTH_UPSTREAM_TOKEN: {
    status: 502,
    rpc: R.SERVER_ERROR,
    fault: 'upstream',
    message: 'Cannot obtain a credential for the upstream',
    when: "The token endpoint for an upstream's outbound credentials (client credentials or token exchange) failed, timed out, refused the request (`data.error` is its OAuth error code) or answered something unusable.",
    action: "Check the upstream's credentials config (client id, secret, token URL or issuer, audience or resource) and the authorization server's logs.",
  },
  SWY_ERR_AUTH_NO_SUBJECT_TOKEN: {
    status: 403,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: "Forbidden: this upstream needs the caller's OAuth access token",
    when: 'An upstream uses token exchange (RFC 8693) but the request was not authenticated with an OAuth access token (no authentication, or an API key).',
    action: 'Authenticate with an access token from the configured authorization server.',
  },
  // --- policy (authorization, argument validation, rate limits) ---
  // Codes in -32000..-32019, the range MCP leaves to implementations (2026-07-28 basic#error-codes:
  // -32020..-32099 are reserved for the spec; -32001 and -32002 are taken, and pre-release drafts
  // used -32003 and -32004).
  SWY_ERR_POLICY_DENIED: {
    status: 200,
    rpc: -32010,
    fault: 'client',
    message: 'Forbidden by policy',
    when: 'A policy rule (or the default) denies this principal the tool, prompt, resource or resource template; answered in-band. With `hideDenied` the unknown-name error is sent instead.',
    action: 'Ask the operator for access; the audit log names the deciding rule.',
  },
  SWY_ERR_POLICY_ARGUMENTS: {
    status: 200,
    rpc: R.INVALID_PARAMS,
    fault: 'client',
    message: "Invalid params: arguments do not match the tool's inputSchema",
    when: "`tools/call` arguments fail the tool's advertised `inputSchema`; the message names the JSON Pointer and the keyword (`data.instancePath`, `data.keyword`).",
    action: 'Fix the argument at the path given; list the tools to see the schema.',
  },
  SWY_ERR_RATE_LIMITED: {
    status: 429,
    rpc: -32011,
    fault: 'client',
    message: 'Too many requests: rate limit exceeded',
    when: 'A token bucket of `rateLimits` is empty for this principal (or principal and tool); `Retry-After` and `data.retryAfterMs` say when a token is back.',
    action: 'Wait `Retry-After` seconds, then retry; spread requests out.',
  },
  // --- telemetry and the admin listener ---
  SWY_ERR_TELEMETRY_CONFIG: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'Invalid telemetry configuration',
    when: 'An `OTEL_*` environment variable has a value Switchyard cannot honour: an endpoint that is not an http(s) URL, the grpc protocol, an exporter other than otlp or none, a sampler or a number that does not parse.',
    action: 'Fix the variable named in the message; docs/operations.md lists the supported values.',
    wire: false,
  },
  SWY_ERR_ADMIN_HOST_FORBIDDEN: {
    status: 403,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Forbidden: Host not allowed on the admin listener',
    when: 'A request to the admin listener names a `Host` outside its allowed list (on a loopback address, by default only loopback names), as a DNS rebinding page would.',
    action: "Use http://127.0.0.1:<port>/, or add the name to the admin listener's `allowedHosts`.",
  },
  SWY_ERR_ADMIN_NOT_FOUND: {
    status: 404,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Not found on the admin listener',
    when: 'A path the admin listener does not serve.',
    action: 'Use /healthz, /readyz, /metrics, /status.json or /.',
  },
  SWY_ERR_ADMIN_METHOD_NOT_ALLOWED: {
    status: 405,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Method not allowed on the admin listener',
    when: 'A method other than GET or HEAD on an admin path.',
    action: 'Use GET.',
  },
  // --- cluster (replicas sharing state through Redis; src/cluster/) ---
  SWY_ERR_CLUSTER_UNAVAILABLE: {
    status: 503,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'Cluster state store unavailable',
    when: 'Redis (`cluster.redis`) is down, refused the command, or did not answer within the command timeout (1,000 ms by default); the call failed at once.',
    action: 'Retry after `Retry-After`; check Redis and the replica `/readyz`.',
  },
  SWY_ERR_CLUSTER_OWNER_GONE: {
    status: 503,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'The replica holding this session, stream or call is gone',
    when: 'A message for an HTTP+SSE session, a stream or a 2026-07-28 held call (`input_required`) kept by another replica found no replica listening on its channel, when sent or at a check while its answer was awaited (250 ms after sending, then every forward timeout): that replica stopped or was killed. Logged at `warn`, without a stack (docs/operations.md).',
    action:
      'Reconnect the stream (GET with `Last-Event-ID`) or reissue the request (a 2026-07-28 call: from the start, without `requestState`); any replica can take it.',
  },
  SWY_ERR_CLUSTER_FORWARD_TIMEOUT: {
    status: 504,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'The replica holding this session, stream or call did not answer in time',
    when: 'A message forwarded to the replica that holds a session, a stream or a 2026-07-28 held call (`input_required`) got no answer in time while that replica still listened: within the forward timeout (5,000 ms), or within the `requestTimeoutMs` of its mount for a held call resumed there.',
    action: 'Retry; if it persists, check that replica.',
  },
  SWY_ERR_CLUSTER_FORWARD_LIMIT: {
    status: 503,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'Too many messages in flight between replicas',
    when: 'A replica waits for answers to `maxPendingForwards` (1,024) forwarded messages, or handles that many for others.',
    action: 'Retry with backoff.',
  },
  SWY_ERR_CLUSTER_MESSAGE_TOO_LARGE: {
    status: 500,
    rpc: R.INTERNAL_ERROR,
    fault: 'internal',
    message: 'Message too large to pass between replicas',
    when: 'A message (or its answer) forwarded between replicas is larger than `maxMessageBytes` (4 MiB) as JSON.',
    action: 'Raise the bound, or keep results smaller.',
  },
  SWY_ERR_CLUSTER_EVENT_TOO_LARGE: {
    status: 500,
    rpc: R.INTERNAL_ERROR,
    fault: 'internal',
    message: 'Event too large for the resumption buffer',
    when: 'An SSE event is larger than `maxEventBytes` (4 MiB); it cannot be stored for `Last-Event-ID` resumption.',
    action: 'Raise the bound, or keep results smaller.',
  },
  SWY_ERR_CLUSTER_REVOCATION_LIMIT: {
    status: 503,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'Too many revoked sessions held',
    when: 'The in-memory revocation list holds `maxRevoked` (100,000) sessions that have not expired yet.',
    action: 'Retry later, or use the Redis store (`cluster.redis`).',
  },
  // --- identity (the front door's authentication wiring; docs/security.md) ---
  SWY_ERR_AUTH_OPEN_LISTENER: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'Refusing to serve without authentication on a non-loopback address',
    when: 'The listener binds an address that is not loopback (`listen.host` such as 0.0.0.0) and a mount has no `auth` (neither its own nor the top-level one); Switchyard does not start.',
    action:
      'Configure `auth` (bearer tokens or API keys), or say that the gateway is open on purpose with `auth: { none: true }` or `--allow-unauthenticated`.',
    wire: false,
  },
  SWY_ERR_HOST_IDENTITY_INVALID: {
    status: 500,
    rpc: R.INTERNAL_ERROR,
    fault: 'internal',
    message: 'Internal error: the host application passed an invalid identity',
    when: "An embedding application passed an identity (the plugin's `identity(request)`, `{ identity }` of `fetch` or `handle`) that is not an `Identity` as `hostIdentity()` builds it: a string, or an object without a non-empty `issuer` and `subject`, a `scopes` array of strings, a `claims` object and a known `source`. Refused before any dialect, in every era; the first one is logged at error.",
    action: 'Host developer: build the identity with `hostIdentity(subject, { scopes, claims })`, or pass null for an unauthenticated request.',
  },
  SWY_ERR_HOST_INTERCEPTOR_RESULT: {
    status: 500,
    rpc: R.INTERNAL_ERROR,
    fault: 'internal',
    message: 'Internal error: an interceptor of the host application returned a result that is not a JSON object',
    when: "An interceptor an embedding application passed (`createSwitchyard(config, { interceptors })`) resolved with something other than a JSON object (a string, a number, a boolean, null, undefined, an array): every MCP result is an object (the `Result` of every revision's schema). Refused in every era as this JSON-RPC error with the request's id, the detail naming what it was (never the value); the first one is logged at error.",
    action:
      'Host developer: resolve with an object, such as the result `next(ctx)` gave with your changes (`{ ...result, … }`), or throw a catalogue error to refuse the request.',
  },
  SWY_ERR_HOST_UNAUTHENTICATED: {
    status: 401,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Unauthorized: the host application did not authenticate the request',
    when: "An embedding application's `identity(request)` (the fastify plugin's) refused the request by throwing an error with `statusCode` 401. `WWW-Authenticate` is the one that error carries in its `headers`, else `Bearer` (RFC 9110 §11.6.1: a 401 names a challenge). Answered before any dialect, the same way in every era and on every route.",
    action: 'Authenticate the way the host application asks (its challenge in `WWW-Authenticate`).',
  },
  SWY_ERR_HOST_FORBIDDEN: {
    status: 403,
    rpc: R.SERVER_ERROR,
    fault: 'client',
    message: 'Forbidden: the host application refused the request',
    when: "An embedding application's `identity(request)` (the fastify plugin's) refused the request by throwing an error with `statusCode` 403 (its `WWW-Authenticate`, if its `headers` carry one, goes with it). Answered before any dialect, the same way in every era and on every route.",
    action: 'Ask the host application for access (or a credential with more rights).',
  },
  SWY_ERR_HOST_PLUGIN_REUSED: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'This Switchyard is registered already',
    when: '`app.register(sy.plugin)` for an instance whose plugin is registered already, in another fastify application or in the same one: the plugin closes its gateway when its application closes, which would stop it under the other registration. `app.register` (or `app.ready()`) rejects with it.',
    action: 'Create one instance per registration with `createSwitchyard`; to serve one gateway from several servers, route them to `sy.handle` or `sy.fetch`.',
    wire: false,
  },
  SWY_ERR_HOST_PATH_TAKEN: {
    status: 0,
    rpc: 0,
    fault: 'client',
    message: 'A path of this Switchyard is served already in the host application',
    when: "`app.register(sy.plugin)` where one of the instance's MCP or HTTP+SSE paths (`listen.path` + the mount's path, under the plugin's fastify prefix if any) already has a route in that fastify application: another Switchyard instance's plugin with the same paths, or a route of the host's own. The detail names the path. Refused before any route is added; `app.register` (or `app.ready()`) rejects with it. With `auth`, also where the host has a route of its own at `/.well-known/oauth-protected-resource` or `/.well-known/oauth-protected-resource/*` (GET, POST, PUT, DELETE or PATCH before the first authenticated instance; OPTIONS where an instance with `cors` would add it): the RFC 9728 metadata routes are shared by every Switchyard on one server, so another instance's never collide, but the host's own would.",
    action:
      "Give one of the instances its own `listen.path` (`listen: { path: '/two' }` serves `/two/mcp`), or, without HTTP+SSE and `auth`, register its plugin under its own fastify `prefix`; or move the host's route (under the metadata path, a route at one path, `/.well-known/oauth-protected-resource/NAME`, is not in the way).",
    wire: false,
  },
  // --- operations: upstream health, circuit breaker ---
  SWY_ERR_UPSTREAM_DOWN: {
    status: 503,
    rpc: R.SERVER_ERROR,
    fault: 'upstream',
    message: 'Upstream down',
    when: "The mount's upstream is marked down: it failed at start or later (a stdio child that exited, an HTTP upstream whose circuit breaker opened after `upstreamBreakerFailures` consecutive failures) and is reconnecting in the background; `Retry-After` says when the next attempt is due, and `data: { upstream, retryAfterMs }` the same wait in ms (at least 1,000, also while an attempt is due or under way; the header is it rounded up to whole seconds).",
    action:
      'Retry after `Retry-After` seconds (or `data.retryAfterMs`); `/readyz` and `/status.json` on the admin listener name the upstream and its last error.',
  },
  // --- replicas (sealed sessions; sessions, streams and held calls that span replicas) ---
  SWY_ERR_SESSION_STATE_TOO_LARGE: {
    status: 400,
    rpc: R.INVALID_PARAMS,
    fault: 'client',
    message: 'Session state too large',
    when: 'The client info and capabilities of an `initialize` pass 16 KiB of JSON (with `cluster` set: do not fit a session id of 4,096 characters), or the URIs a session subscribes to pass 64 KiB together (with `cluster`: its stored state passes 256 KiB).',
    action: 'Send smaller client info and capabilities, or subscribe to fewer resources.',
  },
  // --- hardening (HTTP front door) ---
  SWY_ERR_HTTP_STREAM_LIMIT: {
    status: 503,
    retryAfterS: 1,
    rpc: R.SERVER_ERROR,
    fault: 'internal',
    message: 'Too many open streams for the connection bound',
    when: 'A GET that would hold its connection open (an HTTP+SSE session, a 2025 GET stream) arrived while the listener had `maxConnections` minus 1/`streamReserveDivisor` (1/16) open, or its address `maxConnectionsPerAddress` minus the same share: the rest is kept for POSTs.',
    action:
      'Close unused streams, or raise `maxConnections` / `maxConnectionsPerAddress` together with `maxSessions` (and `ulimit -n`); where the descriptor limit caps them, raise `streamReserveDivisor` to keep a smaller share for POSTs.',
  },
} as const satisfies Record<string, CatalogueEntry>;

/** A catalogue code, e.g. `SWY_ERR_SESSION_NOT_FOUND`. */
export type ErrorCode = keyof typeof Catalogue;

/**
 * The one error class Switchyard throws. Callers match on `code`.
 * - `detail` is appended to the catalogue message after a colon; `message` replaces it whole.
 * - `data` becomes the JSON-RPC error's `data`, as given.
 * - `rpcCode` replaces the catalogue's JSON-RPC code (strict mode tells -32600 from -32602).
 * - `headers` are HTTP response headers the error needs where it ends an exchange
 *   (`Retry-After`, `WWW-Authenticate`).
 * - `operatorMessage` is the message as the operator reads it, with text no peer may see (a stdio
 *   child's last stderr line): never part of `message`, so never on the wire; {@link operatorText}
 *   reads it for logs, `/status.json`, `/readyz` and the CLI's start-failure line.
 *   `operatorDetail` makes one from the catalogue message, as `detail` makes `message`: the
 *   detail with the upstream's own words (an `error_description`, a JSON-RPC error's message).
 */
export class SwitchyardError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown> | undefined;
  readonly rpcCode: number;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** The message with the operator's extra text (see {@link operatorText}); undefined when it has none. */
  readonly operatorMessage: string | undefined;
  /**
   * The detail as the operator reads it (`opts.operatorDetail`, as given): the text
   * `operatorMessage` carries after the catalogue message, for a caller that wraps this error in
   * another code and keeps the operator's words; undefined when none was given.
   */
  readonly operatorDetail: string | undefined;

  constructor(
    code: ErrorCode,
    opts: {
      detail?: string;
      data?: Record<string, unknown>;
      cause?: unknown;
      rpcCode?: number;
      message?: string;
      headers?: Record<string, string>;
      operatorMessage?: string;
      operatorDetail?: string;
    } = {},
  ) {
    const entry = Catalogue[code];
    super(opts.message ?? (opts.detail ? `${entry.message}: ${opts.detail}` : entry.message), { cause: opts.cause });
    this.name = 'SwitchyardError';
    this.code = code;
    this.data = opts.data;
    this.rpcCode = opts.rpcCode ?? entry.rpc;
    this.status = entry.status;
    const retryAfterS = (entry as CatalogueEntry).retryAfterS;
    this.headers = opts.headers ?? (retryAfterS !== undefined ? { 'retry-after': String(retryAfterS) } : undefined);
    this.operatorDetail = opts.operatorDetail;
    this.operatorMessage =
      opts.operatorMessage ??
      (opts.operatorDetail !== undefined && opts.operatorDetail !== opts.detail ? `${entry.message}: ${opts.operatorDetail}` : undefined);
  }

  /** The entry this error comes from. */
  get entry(): CatalogueEntry {
    return Catalogue[this.code];
  }

  /**
   * What the message says after the catalogue's own words (`Upstream unavailable: <detail>`), or
   * undefined when it says nothing more (or was replaced outright by `opts.message`).
   */
  get detail(): string | undefined {
    const head = `${this.entry.message}: `;
    return this.message.startsWith(head) ? this.message.slice(head.length) : undefined;
  }

  /** The JSON-RPC `error` member: `{ code, message, data? }`. */
  toRpcError(): RpcErrorObject {
    const out: RpcErrorObject = { code: this.rpcCode, message: this.message };
    if (this.data !== undefined) out.data = this.data;
    return out;
  }
}

/**
 * What an operator reads of `err` (a log line's `err`, an upstream's `lastError`, the CLI's
 * start-failure line): a SwitchyardError's `operatorMessage` when it has one (the message plus
 * text for the operator only, such as a stdio child's last stderr line), else its `message`;
 * anything else as text. Never for the wire: peers get `message` (`toRpcError`).
 * @see 2025-11-25 basic/transports#stdio (stderr is for logging)
 */
export function operatorText(err: unknown): string {
  if (err instanceof SwitchyardError) return err.operatorMessage ?? err.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * A peer's JSON-RPC error in Switchyard's own words, for a message a client may read:
 * `JSON-RPC error -32603`, its code only. Its `message` and `data` are the peer's words and may
 * repeat what it was sent (`bad key sk-…`): they go to the operator (`operatorDetail`), never to
 * a client.
 * @param error the error member as received (anything: it is not trusted to have a code).
 */
export function rpcErrorWords(error: unknown): string {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' && Number.isSafeInteger(code) ? `JSON-RPC error ${code}` : 'a JSON-RPC error without a code';
}

/**
 * The refusal of `tools/call` arguments that fail tool `tool`'s inputSchema
 * (SWY_ERR_POLICY_ARGUMENTS): the message is the catalogue's, then `TOOL: PROBLEM`; `data.tool` is
 * `tool`, the rest of `data` as given.
 */
export function argumentsError(tool: string, problem: string, data: Record<string, unknown>): SwitchyardError {
  return new SwitchyardError('SWY_ERR_POLICY_ARGUMENTS', { detail: `${tool}: ${problem}`, data: { tool, ...data } });
}

/**
 * `err` naming tool `to` where it names tool `from`: an {@link argumentsError} for `from` is
 * rebuilt for `to` (message and `data.tool`); any other error is returned as it is. Called where
 * a tool's name changes between the client and the upstream (a curation rename, the aggregate's
 * prefix), so that the refusal names the tool as the client called it, and a renamed tool's
 * upstream name stays private.
 */
export function withToolName(err: unknown, from: string, to: string): unknown {
  if (!(err instanceof SwitchyardError) || err.code !== 'SWY_ERR_POLICY_ARGUMENTS' || err.data?.tool !== from) return err;
  const head = `${err.entry.message}: ${from}: `;
  if (!err.message.startsWith(head)) return err;
  const { tool: _from, ...rest } = err.data;
  return argumentsError(to, err.message.slice(head.length), rest);
}

/** Which listener could not be bound: the MCP listener (the CLI, `emulate`) or the admin listener. */
export type ListenerName = 'MCP listener' | 'admin listener';

/** The `listen()` failures people meet, in words (Node's `err.code`, from the OS errno). */
const LISTEN_REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'address not available on this machine',
};

/**
 * SWY_ERR_LISTEN_FAILED for `listener` on `host:port`, saying the cause once:
 * `Cannot listen: admin listener 127.0.0.1:7601: address already in use (EADDRINUSE)` (an IPv6
 * host in brackets; a cause without a known `code` by its own message). `data` is
 * `{ listener, host, port, reason }`, `reason` the cause's `code` when it has one, so that a caller
 * can say what to do (the CLI names the flag that picks another port); `cause` is kept as it came.
 */
export function listenFailed(listener: ListenerName, host: string, port: number, cause: unknown): SwitchyardError {
  const code = (cause as { code?: unknown } | null)?.code;
  const reason = typeof code === 'string' ? code : undefined;
  const words = reason !== undefined && LISTEN_REASONS[reason] !== undefined ? `${LISTEN_REASONS[reason]} (${reason})` : textOfCause(cause);
  const address = authority(host, port);
  return new SwitchyardError('SWY_ERR_LISTEN_FAILED', { detail: `${listener} ${address}: ${words}`, data: { listener, host, port, reason }, cause });
}

function textOfCause(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/** A JSON-RPC 2.0 error object (JSON-RPC 2.0 §5.1). */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * An error a peer sent us (an upstream's JSON-RPC error response), carried through unchanged.
 * Not a catalogue entry: its code and message belong to the peer.
 */
export class PeerRpcError extends Error {
  readonly rpc: RpcErrorObject;
  constructor(rpc: RpcErrorObject) {
    super(rpc.message);
    this.name = 'PeerRpcError';
    this.rpc = rpc;
  }
}

/**
 * Cluster faults that are routine operations, not gateway bugs: a replica that stopped or was
 * killed (SWY_ERR_CLUSTER_OWNER_GONE), one that did not answer in time
 * (SWY_ERR_CLUSTER_FORWARD_TIMEOUT), Redis down or slow (SWY_ERR_CLUSTER_UNAVAILABLE; its change
 * of state is logged too, as `cluster redis down`), and the bound on messages in flight between
 * replicas (SWY_ERR_CLUSTER_FORWARD_LIMIT). The other cluster codes (a message or event over its
 * size bound, the revocation list full) stay errors: they call for a change of config.
 */
const CLUSTER_OPERATIONAL: ReadonlySet<string> = new Set([
  'SWY_ERR_CLUSTER_OWNER_GONE',
  'SWY_ERR_CLUSTER_FORWARD_TIMEOUT',
  'SWY_ERR_CLUSTER_UNAVAILABLE',
  'SWY_ERR_CLUSTER_FORWARD_LIMIT',
]);

/** Errors made by {@link drainRefusal} (a request cut by the drain carries the same code, and is not one). */
const drainRefusals = new WeakSet<SwitchyardError>();

/**
 * The refusal of a new request because the gateway is shutting down
 * (SWY_ERR_ADMISSION_SHUTTING_DOWN, 503, Retry-After 1): an expected answer that every rolling
 * deploy has, so telemetry does not count it as a failure of the request (no `error.type`, no
 * span error status, as for a rate limit; see {@link isDrainRefusal}). A request that was already
 * running and that the drain cuts after `shutdownGraceMs` gets the same code from its own
 * `new SwitchyardError`, and stays a failure.
 */
export function drainRefusal(): SwitchyardError {
  const err = new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
  drainRefusals.add(err);
  return err;
}

/** True when `err` was made by {@link drainRefusal}: a new request refused because the gateway is shutting down. */
export function isDrainRefusal(err: unknown): boolean {
  return err instanceof SwitchyardError && drainRefusals.has(err);
}

/**
 * The log level of a request that failed with `err` (a fault not the client's): `debug` for a
 * refusal whose cause is already logged once as a change of state (an upstream marked down, its
 * breaker open: SWY_ERR_UPSTREAM_DOWN), so that a busy gateway with one dead upstream does not
 * log an error with a stack per refused request; `info` for a request refused or cut because the
 * gateway is shutting down (SWY_ERR_ADMISSION_SHUTTING_DOWN: every rolling deploy has some);
 * `warn` for any other fault of the upstream's (a deadline, a child that exited, a protocol
 * error, an overloaded upstream) and for a bound doing its work (a refusal the catalogue gives a
 * `Retry-After`: sessions, admission, subscriptions, streams) and for the routine cluster faults
 * of {@link CLUSTER_OPERATIONAL} (a replica lost or stalled, Redis down); `error` otherwise (the
 * gateway's own faults).
 */
export function failureLogLevel(err: SwitchyardError): 'debug' | 'info' | 'warn' | 'error' {
  if (err.code === 'SWY_ERR_UPSTREAM_DOWN') return 'debug';
  if (err.code === 'SWY_ERR_ADMISSION_SHUTTING_DOWN') return 'info';
  if (CLUSTER_OPERATIONAL.has(err.code)) return 'warn';
  return err.entry.fault === 'upstream' || err.entry.retryAfterS !== undefined ? 'warn' : 'error';
}

/**
 * Logs `request failed` for a request that failed with `err`, a fault not the client's, at
 * {@link failureLogLevel}: a fault of the gateway's own with the error and its stack; any other
 * as its `code`, `error` (the message as the operator reads it, {@link operatorText}: an upstream's
 * own words kept from the client are here) and `cause` (the message of what caused it), since the
 * stack is the gateway's and says nothing of an upstream or a bound (the access line records the
 * request as well).
 * @param fields added to the line (`rpcId`, `sessionId`, `mount`, `upstream`: see `Executor.failureFields`)
 */
export function logFailure(log: Pick<CoreLog, 'debug' | 'info' | 'warn' | 'error'>, err: SwitchyardError, fields: Record<string, unknown>): void {
  const level = failureLogLevel(err);
  if (level === 'error') return log.error({ err, ...fields }, 'request failed');
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  log[level]({ code: err.code, error: operatorText(err), ...(cause !== undefined ? { cause } : {}), ...fields }, 'request failed');
}

/**
 * The error a peer is sent for `err`: `err` itself when it is a wire error. A local one (config,
 * CLI, startup: `wire: false`, HTTP status 0, which no HTTP answer may carry) becomes
 * `SWY_ERR_INTERNAL_FAULT` (500, -32603) with `err` as its cause: the client did nothing wrong,
 * and the local text (config paths) is for the operator's log.
 */
export function toWireError(err: SwitchyardError): SwitchyardError {
  return err.entry.wire === false ? new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { cause: err }) : err;
}

/**
 * Turns anything thrown into a JSON-RPC error object; unknown throwables and local errors become
 * -32603 (`SWY_ERR_INTERNAL_FAULT`), never -32700 or -32602 (STYLE §4).
 */
export function toRpcError(err: unknown): RpcErrorObject {
  if (err instanceof SwitchyardError) return toWireError(err).toRpcError();
  if (err instanceof PeerRpcError) return err.rpc;
  return { code: R.INTERNAL_ERROR, message: Catalogue.SWY_ERR_INTERNAL_FAULT.message };
}

/** HTTP status for an error that ends an HTTP exchange; 500 for anything not from the catalogue, and for a local error. */
export function statusOf(err: unknown): number {
  if (err instanceof SwitchyardError) return toWireError(err).status;
  if (err instanceof PeerRpcError) return 200;
  return 500;
}
