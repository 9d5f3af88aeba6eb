// The one error catalogue: every error Switchyard sends to a peer or reports locally.
//
// Each entry: a stable code `SWY_ERR_<AREA>_<WHAT>`, a message, the HTTP status used when the
// error ends an HTTP exchange, the JSON-RPC error code, and who is at fault. `docs/errors.md`
// has one row per code and `test/invariants/errors-doc.test.ts` keeps the two in step.
// A retired code is never reused.

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
  readonly wire: boolean;
  readonly when: string;
  readonly action: string;
}

const e = (status: number, rpc: number, fault: Fault, message: string, when: string, action: string, wire = true): CatalogueEntry => ({
  status,
  rpc,
  fault,
  message,
  when,
  action,
  wire,
});

/** JSON-RPC 2.0 and MCP error codes used below (JSON-RPC 2.0 §5.1; MCP 2026-07-28 basic#error-codes). */
export const RpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  SERVER_ERROR: -32000,
  SESSION_NOT_FOUND: -32001,
  RESOURCE_NOT_FOUND_LEGACY: -32002,
  HEADER_MISMATCH: -32020,
  MISSING_CLIENT_CAPABILITY: -32021,
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
} as const;

const R = RpcCode;

/** The catalogue, keyed by code. Matching is by code, never by message text. */
export const Catalogue = {
  // --- request syntax (every transport) ---
  SWY_ERR_REQ_PARSE: e(
    400,
    R.PARSE_ERROR,
    'client',
    'Parse error: invalid JSON',
    'The body is not valid UTF-8, or not JSON.',
    'Send one well-formed JSON value in UTF-8.',
  ),
  SWY_ERR_REQ_INT_TOO_LONG: e(
    400,
    R.PARSE_ERROR,
    'client',
    'Parse error: integer literal longer than the limit',
    'A number literal has more integer digits than `maxIntegerDigits` (64).',
    'Send shorter numbers; ids must fit int64.',
  ),
  SWY_ERR_REQ_INVALID: e(
    400,
    R.INVALID_REQUEST,
    'client',
    'Invalid Request: not a JSON-RPC 2.0 message',
    'The JSON is not a JSON-RPC 2.0 request, notification or response.',
    'Send `{"jsonrpc":"2.0","method":…}`.',
  ),
  SWY_ERR_REQ_BAD_ID: e(
    400,
    R.INVALID_REQUEST,
    'client',
    'Invalid Request: id must be a string of at most 256 bytes or an integer in the int64 range',
    'The request id is null, fractional, too large, or a string over `maxIdBytes`.',
    'Use a short string or a 64-bit integer id.',
  ),
  SWY_ERR_REQ_BAD_PROGRESS_TOKEN: e(
    400,
    R.INVALID_PARAMS,
    'client',
    'Invalid params: progressToken must be a string of at most 256 bytes or an integer in the int64 range',
    '`params._meta.progressToken` breaks the same bounds as ids.',
    'Use a short string or a 64-bit integer token.',
  ),
  SWY_ERR_REQ_DUPLICATE_ID: e(
    200,
    R.INVALID_REQUEST,
    'client',
    'Invalid Request: id is already in use by a request in flight',
    'A session sends a request whose id an unfinished request of the same session already uses.',
    'Use a new id for each request.',
  ),
  SWY_ERR_REQ_TOO_DEEP: e(
    400,
    R.PARSE_ERROR,
    'client',
    'Parse error: nesting deeper than the limit',
    'Arrays and objects nest deeper than `maxJsonDepth` (128).',
    'Flatten the message.',
  ),
  SWY_ERR_REQ_SCHEMA: e(
    400,
    R.INVALID_PARAMS,
    'client',
    'Invalid message: does not match the protocol schema',
    "Strict `reject` mode: a client message fails its era's JSON schema (-32600 for the envelope, -32602 for params).",
    'Fix the message at the JSON path given.',
  ),
  SWY_ERR_REQ_BATCH_NOT_ALLOWED: e(
    400,
    R.INVALID_REQUEST,
    'client',
    'Invalid Request: batches are only allowed in protocol revision 2025-03-26',
    'A JSON array was posted outside a 2025-03-26 session.',
    'Send one message per POST.',
  ),
  SWY_ERR_REQ_BATCH_TOO_LARGE: e(
    400,
    R.INVALID_REQUEST,
    'client',
    'Invalid Request: batch has more messages than the limit',
    'A 2025-03-26 batch exceeds `maxBatchMessages`.',
    'Send smaller batches.',
  ),
  SWY_ERR_REQ_PARAMS: e(
    200,
    R.INVALID_PARAMS,
    'client',
    'Invalid params',
    'The method exists but its params are wrong (unknown tool, missing argument).',
    'Fix the params; the message says which.',
  ),
  SWY_ERR_REQ_METHOD_NOT_FOUND: e(
    404,
    R.METHOD_NOT_FOUND,
    'client',
    'Method not found',
    "The method is unknown in the client's era, or gated on a capability the server lacks.",
    'Call a method the era defines (see server/discover or initialize).',
  ),
  SWY_ERR_REQ_RESOURCE_NOT_FOUND: e(
    200,
    R.INVALID_PARAMS,
    'client',
    'Resource not found',
    'resources/read names a URI the upstream does not have (-32002 toward eras before 2026-07-28).',
    'List resources first.',
  ),
  SWY_ERR_REQ_LOG_LEVEL: e(
    200,
    R.INVALID_PARAMS,
    'client',
    'Invalid params: unknown log level',
    "A log level is not one of RFC 5424's eight names.",
    'Use debug, info, notice, warning, error, critical, alert or emergency.',
  ),
  SWY_ERR_REQ_INPUT_ROUNDS: e(
    200,
    R.INTERNAL_ERROR,
    'upstream',
    'Too many input_required rounds',
    'An upstream asked for client input more than `maxInputRounds` times for one request.',
    'Fix the upstream tool; it never completes.',
  ),
  SWY_ERR_REQ_INPUT_UNSUPPORTED: e(
    200,
    R.INVALID_PARAMS,
    'client',
    "Client cannot answer the server's input request",
    'The server needs input (elicitation, sampling, roots) that this client did not declare or cannot receive here.',
    'Declare the capability, or call over a stream that can carry server requests.',
  ),
  // --- HTTP framing ---
  SWY_ERR_HTTP_BODY_TOO_LARGE: e(
    413,
    R.INVALID_REQUEST,
    'client',
    'Request body exceeds the limit',
    'The body is larger than `maxBodyBytes` (2 MB).',
    'Send smaller messages.',
  ),
  SWY_ERR_HTTP_CONTENT_TYPE: e(
    415,
    R.SERVER_ERROR,
    'client',
    'Unsupported Media Type: Content-Type must be application/json',
    'A POST carries another Content-Type.',
    'Send `Content-Type: application/json`.',
  ),
  SWY_ERR_HTTP_NOT_ACCEPTABLE: e(
    406,
    R.SERVER_ERROR,
    'client',
    'Not Acceptable: client must accept application/json and text/event-stream',
    "A POST's Accept lacks one of the two types (or a GET's lacks text/event-stream).",
    'Send `Accept: application/json, text/event-stream`.',
  ),
  SWY_ERR_HTTP_METHOD_NOT_ALLOWED: e(
    405,
    R.SERVER_ERROR,
    'client',
    'Method not allowed',
    'An HTTP method the path does not serve (GET without a session when HTTP+SSE is off, PUT, …).',
    'POST to the MCP path; enable --legacy-sse for HTTP+SSE clients.',
  ),
  SWY_ERR_HTTP_ORIGIN_FORBIDDEN: e(
    403,
    R.SERVER_ERROR,
    'client',
    'Forbidden: Origin not allowed',
    'An `Origin` header is present and not on the allowlist, has userinfo, or is malformed.',
    'Add the origin with --allowed-origin.',
  ),
  SWY_ERR_HTTP_HOST_FORBIDDEN: e(
    403,
    R.SERVER_ERROR,
    'client',
    'Forbidden: Host not allowed',
    '`allowedHosts` is set and `Host` is not on it.',
    'Add the host with --allowed-host.',
  ),
  SWY_ERR_HTTP_FRAMING: e(
    400,
    R.INVALID_REQUEST,
    'client',
    'Invalid HTTP request',
    "Node's HTTP parser refused the request before routing: headers or body too slow (408), headers too large (431), or bad framing (400).",
    'Send a well-formed HTTP/1.1 request in time.',
  ),
  SWY_ERR_HTTP_NOT_FOUND: e(404, R.SERVER_ERROR, 'client', 'Not found', 'A path Switchyard does not serve.', 'Use the MCP path (default /mcp).'),
  // --- stdio front door (2025-11-25 basic/transports#stdio) ---
  SWY_ERR_STDIO_LINE_TOO_LONG: e(
    413,
    R.INVALID_REQUEST,
    'client',
    'Invalid Request: line exceeds the limit',
    'A stdio line is longer than `maxLineBytes` (2,000,000 bytes); it is refused with id null before decoding and the rest of the line is discarded.',
    'Send smaller messages, one per line.',
  ),
  SWY_ERR_STDIO_WRITE_STALLED: e(
    0,
    0,
    'client',
    'stdio client stopped reading',
    'A write to stdout stayed blocked past `writeTimeoutMs` (5,000 ms), or more than `maxStreamBufferBytes` queued behind it; the stdio transport ended and its requests were cancelled.',
    'Read stdout continuously.',
    false,
  ),
  // --- 2026-07-28 stateless validation (stateless-2026-07-28 §4.2) ---
  SWY_ERR_MODERN_META: e(
    400,
    R.INVALID_PARAMS,
    'client',
    'Invalid params: missing or malformed protocol _meta',
    'A 2026-07-28 request lacks `_meta` protocolVersion or clientCapabilities, or they are malformed.',
    'Send the REQUIRED `_meta` keys on every request.',
  ),
  SWY_ERR_MODERN_HEADER_MISMATCH: e(
    400,
    R.HEADER_MISMATCH,
    'client',
    'Header mismatch',
    'A mirrored header (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*) is missing, invalid or differs from the body.',
    'Mirror the body into the headers exactly.',
  ),
  SWY_ERR_MODERN_VERSION: e(
    400,
    R.UNSUPPORTED_PROTOCOL_VERSION,
    'client',
    'Unsupported protocol version',
    'The requested protocol version is not served; `data.supported` lists those that are.',
    'Retry with a version from `data.supported`.',
  ),
  SWY_ERR_MODERN_CAPABILITY: e(
    400,
    R.MISSING_CLIENT_CAPABILITY,
    'client',
    'Missing required client capability',
    'The request needs a client capability it did not declare (`data.requiredCapabilities`).',
    'Declare the capability in `_meta`.',
  ),
  // --- 2025-era and HTTP+SSE sessions ---
  SWY_ERR_SESSION_REQUIRED: e(
    400,
    R.SERVER_ERROR,
    'client',
    'Bad Request: Mcp-Session-Id header is required',
    'A 2025-era request other than initialize carries no session (or an HTTP+SSE POST no `sessionId`).',
    'Send initialize first and echo the session id.',
  ),
  SWY_ERR_SESSION_QUERY_REQUIRED: e(
    400,
    R.SERVER_ERROR,
    'client',
    'Bad Request: sessionId query parameter is required',
    'An HTTP+SSE POST carries no `sessionId` query parameter.',
    'POST to the URI the `endpoint` event named.',
  ),
  SWY_ERR_SESSION_NOT_FOUND: e(
    404,
    R.SESSION_NOT_FOUND,
    'client',
    'Session not found',
    'The session id is unknown, expired or deleted.',
    'Start over with a new initialize.',
  ),
  SWY_ERR_SESSION_LIMIT: e(
    503,
    R.SERVER_ERROR,
    'internal',
    'Too many sessions',
    'The dialect holds `maxSessions` live sessions.',
    'Retry later; end unused sessions with DELETE.',
  ),
  SWY_ERR_SESSION_NOT_INITIALIZED: e(
    400,
    R.SERVER_ERROR,
    'client',
    'Bad Request: Server not initialized',
    'A request other than initialize or ping arrives before initialize.',
    'Send initialize first.',
  ),
  SWY_ERR_SESSION_ALREADY_INITIALIZED: e(
    400,
    R.INVALID_REQUEST,
    'client',
    'Invalid Request: Server already initialized',
    'initialize on a session that is initialized, or inside a batch.',
    'Start a new session without the header.',
  ),
  SWY_ERR_SESSION_VERSION_HEADER: e(
    400,
    R.SERVER_ERROR,
    'client',
    'Bad Request: Unsupported protocol version',
    'MCP-Protocol-Version names a revision this endpoint does not serve (2025-06-18 basic/transports#protocol-version-header).',
    'Send the negotiated version.',
  ),
  SWY_ERR_SESSION_STREAM_CONFLICT: e(
    409,
    R.SERVER_ERROR,
    'client',
    'Conflict: only one GET stream is allowed per session',
    'A second GET stream on a session that has one open.',
    'Close the first stream.',
  ),
  SWY_ERR_SESSION_BAD_EVENT_ID: e(
    400,
    R.SERVER_ERROR,
    'client',
    'Bad Request: unknown Last-Event-ID',
    'Last-Event-ID names no event the session still holds.',
    'Reissue the request.',
  ),
  SWY_ERR_SESSION_WRONG_TRANSPORT: e(
    400,
    R.SERVER_ERROR,
    'client',
    'Bad Request: session uses a different transport',
    'A session id of one transport was sent to the other.',
    'Use the transport that created the session.',
  ),
  // --- admission and bounds ---
  SWY_ERR_ADMISSION_BUSY: e(
    503,
    R.SERVER_ERROR,
    'internal',
    'Server busy: too many requests in flight',
    '`maxConcurrent` requests run and `maxQueued` wait.',
    'Retry with backoff.',
  ),
  SWY_ERR_SUBSCRIPTION_LIMIT: e(
    503,
    R.SERVER_ERROR,
    'internal',
    'Too many subscriptions',
    '`maxSubscriptions` listen streams are open.',
    'Close a subscription first.',
  ),
  SWY_ERR_ADMISSION_SHUTTING_DOWN: e(
    503,
    R.SERVER_ERROR,
    'internal',
    'Server is shutting down',
    'A request arrives after SIGINT/SIGTERM.',
    'Retry on another instance.',
  ),
  SWY_ERR_REQ_DEADLINE: e(
    504,
    R.SERVER_ERROR,
    'upstream',
    'Request timed out',
    'The request ran past `requestTimeoutMs`; the upstream was told to cancel.',
    'Raise the deadline or fix the slow upstream.',
  ),
  SWY_ERR_REQ_CANCELLED: e(
    499,
    R.SERVER_ERROR,
    'client',
    'Request cancelled',
    'The client cancelled the request; nothing is sent on the wire for it.',
    'None.',
  ),
  // --- upstream faults ---
  SWY_ERR_UPSTREAM_UNAVAILABLE: e(
    502,
    R.SERVER_ERROR,
    'upstream',
    'Upstream unavailable',
    'The upstream process is not running or exited with the request in flight.',
    "Check the upstream's logs; Switchyard restarts stdio children with backoff.",
  ),
  SWY_ERR_UPSTREAM_PROTOCOL: e(
    502,
    R.INTERNAL_ERROR,
    'upstream',
    'Upstream protocol error',
    'The upstream sent something that is not valid MCP for its era.',
    'Fix or upgrade the upstream.',
  ),
  SWY_ERR_UPSTREAM_OVERLOADED: e(
    503,
    R.SERVER_ERROR,
    'upstream',
    'Upstream overloaded: too many requests in flight',
    'More than `maxInFlightPerUpstream` requests wait on one upstream.',
    'Retry with backoff.',
  ),
  // --- internal ---
  SWY_ERR_INTERNAL_FAULT: e(
    500,
    R.INTERNAL_ERROR,
    'internal',
    'Internal error',
    'A fault in Switchyard itself; the log has the stack.',
    'Report it with the log line.',
  ),
  // --- local (never on the wire) ---
  SWY_ERR_CONFIG_INVALID: e(
    0,
    0,
    'client',
    'Invalid configuration',
    'The config file or flags fail the schema; every failing path is listed.',
    'Fix the listed paths.',
    false,
  ),
  SWY_ERR_CLI_USAGE: e(0, 0, 'client', 'Invalid command line', 'Unknown flag or bad flag value.', 'See `switchyard --help`.', false),
  SWY_ERR_LISTEN_FAILED: e(0, 0, 'internal', 'Cannot listen', 'The host/port cannot be bound.', 'Pick another port.', false),
} as const satisfies Record<string, CatalogueEntry>;

/** A catalogue code, e.g. `SWY_ERR_SESSION_NOT_FOUND`. */
export type ErrorCode = keyof typeof Catalogue;

/**
 * The one error class Switchyard throws. Callers match on `code`.
 * `data` becomes the JSON-RPC error's `data` (merged with `{ code }`); `rpcOverride` lets a
 * pass-through upstream error keep its own JSON-RPC code and message.
 */
export class SwitchyardError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown> | undefined;
  readonly rpcCode: number;
  readonly status: number;

  constructor(code: ErrorCode, opts: { detail?: string; data?: Record<string, unknown>; cause?: unknown; rpcCode?: number; message?: string } = {}) {
    const entry = Catalogue[code];
    super(opts.message ?? (opts.detail ? `${entry.message}: ${opts.detail}` : entry.message), { cause: opts.cause });
    this.name = 'SwitchyardError';
    this.code = code;
    this.data = opts.data;
    this.rpcCode = opts.rpcCode ?? entry.rpc;
    this.status = entry.status;
  }

  /** The entry this error comes from. */
  get entry(): CatalogueEntry {
    return Catalogue[this.code];
  }

  /** The JSON-RPC `error` member: `{ code, message, data? }`. */
  toRpcError(): RpcErrorObject {
    const out: RpcErrorObject = { code: this.rpcCode, message: this.message };
    if (this.data !== undefined) out.data = this.data;
    return out;
  }
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
 * Turns anything thrown into a JSON-RPC error object; unknown throwables become -32603
 * (`SWY_ERR_INTERNAL_FAULT`), never -32700 or -32602 (STYLE §4).
 */
export function toRpcError(err: unknown): RpcErrorObject {
  if (err instanceof SwitchyardError) return err.toRpcError();
  if (err instanceof PeerRpcError) return err.rpc;
  return { code: R.INTERNAL_ERROR, message: Catalogue.SWY_ERR_INTERNAL_FAULT.message };
}

/** HTTP status for an error that ends an HTTP exchange; 500 for anything not from the catalogue. */
export function statusOf(err: unknown): number {
  if (err instanceof SwitchyardError) return err.status;
  if (err instanceof PeerRpcError) return 200;
  return 500;
}
