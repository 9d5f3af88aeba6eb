// Finds which MCP era an HTTP server speaks, by the spec's client fallback rule, with the era
// clients' own requests.

import { request, type Dispatcher } from 'undici';
import type { EraClients } from '../core/era.js';
import { DEFAULT_LIMITS, type Limits } from '../core/limits.js';
import type { JsonObject } from '../core/message.js';
import { isBatched } from '../core/upstream-answers.js';
import { rpcErrorWords, SwitchyardError } from '../core/errors.js';
import { STATELESS_REVISION } from '../core/versions.js';
import { openHttpSseStream } from './http/http-sse.js';
import { judgeRedirect } from './http/redirect.js';
import { drain, headerOf, networkErrorText, networkErrorWords, postMessage, type HttpLimits, type PostAnswer } from './http/transport.js';

/** One step of a probe: what was sent and what came back. */
export interface ProbeStep {
  /** e.g. `POST /mcp server/discover`. */
  request: string;
  /** HTTP status, when a response came. */
  status?: number;
  /** The first 300 characters of the body (or the first SSE event) of this request's own answer. */
  excerpt?: string;
  /**
   * HTTP+SSE initialize: the first 300 characters of the reply read from the stream the GET opened
   * (with its id, or one with another id), which is not the POST's answer: `status` is the POST's
   * (202), and `excerpt` its body only when that body is the reply or a refusal.
   */
  streamReply?: string;
  /** Network error or timeout; with `status`, why the answer that came could not be read. */
  error?: string;
  /** What the step concluded. */
  note: string;
}

/** The probe's finding. */
export interface ProbeVerdict {
  /** True when an era was found. */
  ok: boolean;
  /** The revision: 2026-07-28, the negotiated 2025 revision, or 2024-11-05. */
  era?: string;
  /** `stateless-http` (2026-07-28), `streamable-http` (2025 era) or `http+sse` (2024-11-05). */
  transport?: 'stateless-http' | 'streamable-http' | 'http+sse';
  /**
   * With `dualEra`: the revision of a 2025 session the same URL also opens (an InitializeResult
   * with `Mcp-Session-Id` after a modern answer), i.e. a dual-era server.
   */
  alsoSessions?: string;
  /** The URL that answered (after same-origin redirects). */
  url: string;
  /** For HTTP+SSE: the POST endpoint named by the `endpoint` event, absolute. */
  endpoint?: string;
  serverInfo?: JsonObject;
  capabilities?: JsonObject;
  /**
   * Rules the server broke that the gateway tolerates (the verdict stands), e.g. events before an
   * HTTP+SSE stream's `endpoint` event, or an HTTP+SSE server no client can connect to (its
   * `initialize` got no reply, an invalid one, or an error). For the operator: may quote what the
   * server wrote (that error). Absent when none.
   */
  warnings?: string[];
  /** Why no era was found (ok false), quoting what the server wrote (a challenge's `error_description`, a JSON-RPC error): for the operator. */
  reason?: string;
  /**
   * With `reason`: the same in Switchyard's own words, for what a client may read (a library
   * gateway's start failure): without the server's free text, which may repeat a credential sent
   * to it (`token sk-… expired`); e.g. `HTTP 401: the server refused the credential sent
   * (invalid_token)`, `initialize answered HTTP 200 with JSON-RPC error -32603`.
   */
  clientReason?: string;
  /** When no era was found because the server could not be reached: the network error, said once (the operator's text: it may name the address). */
  networkError?: string;
  /** With `networkError`: the same in words a client may read, without the address (`connection refused`). */
  networkWords?: string;
  steps: ProbeStep[];
}

/** Probe settings. */
export interface ProbeOptions {
  /** Extra request headers (e.g. Authorization). */
  headers?: Record<string, string>;
  /** Time for each step's response, ms (default `upstreamProbeTimeoutMs`). */
  timeoutMs?: number;
  /** Tries for a step that gets a 5xx, a timeout or a reset (default 3), with backoff. */
  tries?: number;
  /** First backoff delay, ms (default `upstreamBackoffMinMs`; doubles, up to `backoffMaxMs`). */
  backoffMs?: number;
  /** Longest backoff delay, ms (default `upstreamBackoffMaxMs`): the probe's share of that limit (docs/upstreams.md, Limits). */
  backoffMaxMs?: number;
  /** Implementation sent as the client (default `switchyard-probe`). */
  clientInfo?: { name: string; version: string };
  /**
   * After a modern answer, also try `initialize`, to find a dual-era server (default true: the
   * verdict the gateway's `auto` and `match-client` act on, which `switchyard probe` must show;
   * the breaker's liveness trial turns it off).
   */
  dualEra?: boolean;
  /** Parse and size bounds of what the server sends (default DEFAULT_LIMITS). */
  limits?: HttpLimits & Pick<Limits, 'upstreamRequestTimeoutMs'>;
  /** The undici dispatcher to send through (an upstream's own Agent; default the global one). */
  dispatcher?: Dispatcher;
  /**
   * How the caller gives the server credentials, appended to the reason when it wants some and
   * none were sent (`switchyard probe`: its `--header` flag; the gateway: the upstream's config
   * keys). Default: nothing; the probe serves both, and neither's advice fits the other.
   */
  credentialsHint?: string;
}

const excerpt = (s: string | undefined) => (s ?? '').replace(/\s+/g, ' ').slice(0, 300);

function describe(a: PostAnswer, first?: JsonObject): string {
  if (a.kind === 'json') return excerpt(JSON.stringify(a.json));
  if (a.kind === 'sse') return excerpt(first ? JSON.stringify(first) : '(SSE stream)');
  return excerpt(a.text);
}

/**
 * For an answer with a body that is neither JSON nor an event stream by its `Content-Type`: what
 * the type was, e.g. ` (Content-Type text/plain, not application/json or text/event-stream)`;
 * otherwise ''. The body may hold the very result looked for: the reason must say why it did not count.
 * @see 2025-11-25 basic/transports#sending-messages-to-the-server (the two answer types)
 */
function wrongType(a: PostAnswer): string {
  const ct = headerOf(a.headers, 'content-type');
  if (a.kind !== 'other' || ct?.toLowerCase().startsWith('application/json')) return '';
  return ` (Content-Type ${ct ? excerpt(ct) : 'absent'}, not application/json or text/event-stream)`;
}

class Retryable extends Error {}

// RFC 9110 §5.6.2: tchar.
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;

/**
 * The auth-params of the first `Bearer` challenge among `WWW-Authenticate` values (names
 * lower-cased, quoted-string values unquoted; the first of a repeated name counts), or undefined
 * when no value has a Bearer challenge. Lenient: what does not parse is skipped.
 * @see RFC 9110 §11.6.1 (WWW-Authenticate), §5.6.4 (quoted-string); RFC 6750 §3
 */
export function bearerChallenge(values: string | readonly string[] | undefined): Record<string, string> | undefined {
  for (const value of values === undefined ? [] : typeof values === 'string' ? [values] : values) {
    let i = 0;
    let params: Record<string, string> | undefined;
    let isBearer = false;
    const ows = () => {
      while (value[i] === ' ' || value[i] === '\t') i++;
    };
    const token = () => {
      const from = i;
      while (i < value.length && TCHAR.test(value[i])) i++;
      return value.slice(from, i);
    };
    while (i < value.length) {
      ows();
      const name = token();
      if (name === '') {
        i++;
        continue;
      }
      ows();
      if (value[i] !== '=' || params === undefined) {
        // A new challenge's scheme (a token68 after it reads as a name without '=' and is skipped).
        if (isBearer) return params;
        isBearer = name.toLowerCase() === 'bearer';
        params = {};
        continue;
      }
      i++;
      ows();
      let v = '';
      if (value[i] === '"') {
        for (i++; i < value.length && value[i] !== '"'; i++) v += value[i] === '\\' && i + 1 < value.length ? value[++i] : value[i];
        i++;
      } else v = token();
      params[name.toLowerCase()] ??= v;
    }
    if (isBearer) return params;
  }
  return undefined;
}

/**
 * Whether an answer is an authentication refusal, which is never era evidence: any 401 or 403,
 * and a 400 whose Bearer challenge carries an `error` (RFC 6750 §3.1 `invalid_request`: the
 * `Authorization` header is malformed, e.g. `Bearer a b`, or repeated). A 400 without one stays
 * the spec's fallback status, even with a bare challenge (a server may name its resource metadata
 * on every answer).
 * @param status the answer's HTTP status.
 * @param answerHeaders the answer's headers (`www-authenticate` read).
 * @see RFC 6750 §3.1 (invalid_request is 400); 2025-11-25 basic/transports#backwards-compatibility
 */
function isAuthRefusal(status: number, answerHeaders: Record<string, string | string[] | undefined>): boolean {
  if (status === 401 || status === 403) return true;
  return status === 400 && bearerChallenge(answerHeaders['www-authenticate'])?.error !== undefined;
}

/**
 * Why an authentication refusal (see {@link isAuthRefusal}) ended the probe. When the probe sent
 * `Authorization` and the server's Bearer challenge says `invalid_request` (400),
 * `invalid_token` (401) or `insufficient_scope` (403), the header was malformed or the credential
 * refused: the reason says so, quoting `error_description` (and for scope, the `scope` wanted),
 * since asking for credentials that were just sent helps nobody. Otherwise the server wants
 * credentials, and `hint` says how to pass them.
 * @param status 400, 401 or 403.
 * @param answerHeaders the response's headers (`www-authenticate` read).
 * @param sent the request headers the probe sent (names in any case).
 * @param hint appended when no `Authorization` was sent (the CLI's way to send one), or ''.
 * @param quote whether to quote what the server wrote (`error_description`, `scope`, an error code
 *   RFC 6750 does not define, `serverSaid`): true for `reason`, false for `clientReason`.
 * @param serverSaid the answer's own words (its JSON-RPC error's message, or its text), quoted for
 *   a 403 that names no challenge.
 * @returns the verdict's `reason`, e.g. `HTTP 401: the server refused the credential sent
 *   (invalid_token: "malformed JWT")` or `HTTP 400: the server refused the Authorization header
 *   sent as malformed (invalid_request: "the Bearer credential is not exactly one b64token")`.
 * @see RFC 6750 §3.1 (error codes); RFC 9110 §15.5.1 (400), §15.5.2 (401), §15.5.4 (403)
 */
function authReason(
  status: number,
  answerHeaders: Record<string, string | string[] | undefined>,
  sent: Record<string, string>,
  hint: string,
  quote: boolean,
  serverSaid?: string,
): string {
  const sentAuthorization = Object.keys(sent).some((k) => k.toLowerCase() === 'authorization');
  if (!sentAuthorization) {
    // A 403 that names no challenge asked for nothing: an Origin or Host allowlist, a firewall, a
    // policy. Read as "wants credentials", it sent the operator to the credential keys while the
    // server said why (`Forbidden: Origin not allowed`; found by h-trial6).
    if (status === 403 && !hasChallenge(answerHeaders['www-authenticate'])) {
      const why = quote && serverSaid ? `: ${JSON.stringify(excerpt(serverSaid))}` : '';
      return `HTTP 403: the server refused the request without asking for credentials (no WWW-Authenticate challenge)${why}`;
    }
    return `HTTP ${status}: the server wants credentials${hint}`;
  }
  const challenge = bearerChallenge(answerHeaders['www-authenticate']);
  const error = challenge?.error;
  // Quoted as JSON strings: a description may itself hold quotes (a trial saw `"needs "mcp:admin""`).
  const said = quote && challenge?.error_description ? `: ${JSON.stringify(excerpt(challenge.error_description))}` : '';
  if (status === 400 && error === 'invalid_request') return `HTTP 400: the server refused the Authorization header sent as malformed (invalid_request${said})`;
  if (status === 401 && error === 'invalid_token') return `HTTP 401: the server refused the credential sent (invalid_token${said})`;
  if (status === 403 && error === 'insufficient_scope') {
    const scope = quote && challenge?.scope ? `; it asks for scope ${JSON.stringify(excerpt(challenge.scope))}` : '';
    return `HTTP 403: the credential sent lacks the scope the server requires (insufficient_scope${said}${scope})`;
  }
  // An error code RFC 6750 does not define is the server's text like its description.
  const named = error !== undefined && error !== '' && (quote || RFC6750_ERRORS.has(error));
  return `HTTP ${status}: the server did not accept the Authorization header sent${named ? ` (${excerpt(error)}${said})` : ''}`;
}

/** Whether a `WWW-Authenticate` field names any challenge at all (RFC 9110 §11.6.1). */
function hasChallenge(value: string | string[] | undefined): boolean {
  return (Array.isArray(value) ? value : [value]).some((v) => typeof v === 'string' && v.trim() !== '');
}

/** What an answer said in its own words: its JSON-RPC error's message, else its text; undefined for none. */
function answerSaid(a: PostAnswer): string | undefined {
  if (a.kind === 'json') {
    const message = ((a.json as JsonObject | undefined)?.error as JsonObject | undefined)?.message;
    return typeof message === 'string' && message !== '' ? message : undefined;
  }
  return a.kind === 'other' && a.text ? a.text : undefined;
}

/** RFC 6750 §3.1's error codes: Switchyard's words when a reason names one. */
const RFC6750_ERRORS = new Set(['invalid_request', 'invalid_token', 'insufficient_scope']);

/** The step's note for an authentication refusal: a 400 says why it is no fallback status. */
const authNote = (status: number, answerHeaders: Record<string, string | string[] | undefined>) =>
  status === 400
    ? 'a Bearer challenge with an error: authentication refused, not era evidence'
    : status === 403 && !hasChallenge(answerHeaders['www-authenticate'])
      ? 'forbidden, no authentication challenge: not era evidence'
      : 'authentication required: not era evidence';

/**
 * Why an InitializeResult's revision cannot be used, or undefined when Switchyard speaks it. The
 * server's answer is a counter-offer the client must accept or disconnect from; the gateway
 * refuses to start on such a revision, so the probe names no era for it either.
 * @param revision the InitializeResult's `protocolVersion`.
 * @param spoken the era client's revisions.
 * @see 2025-11-25 basic/lifecycle#version-negotiation
 */
function unspoken(revision: string, spoken: readonly string[]): string | undefined {
  if (spoken.includes(revision)) return undefined;
  const said = `initialize settled on ${JSON.stringify(excerpt(revision))}`;
  // Switchyard speaks the stateless revision, but not over initialize: no session is at it.
  if (revision === STATELESS_REVISION) return `${said}, the stateless revision, which has no initialize (in a session Switchyard speaks ${spoken.join(', ')})`;
  return `${said}, which Switchyard does not speak (it speaks ${spoken.join(', ')})`;
}

/** A step's note for an InitializeResult: `an InitializeResult at 2025-11-25`. */
const atRevision = (revision: string) => `an InitializeResult at ${excerpt(revision)}`;

/**
 * A step's note for an InitializeResult at a revision {@link unspoken} refuses: the stateless
 * revision has no initialize (2026-07-28 basic/lifecycle), so naming it there is the server's mistake.
 */
const atUnspoken = (revision: string) =>
  `${atRevision(revision)}, ${revision === STATELESS_REVISION ? 'the stateless revision, which has no initialize' : 'a revision Switchyard does not speak'}`;

/**
 * Why an answer to `server/discover` is no evidence of `modern`, for the step's note: a
 * DiscoverResult or a -32022 that names only other revisions is said to be one (the server
 * speaks the stateless protocol's errors, just not this revision), rather than "not a
 * DiscoverResult" or "without a modern error body", which read as if the server had not
 * understood the probe.
 * @see 2026-07-28 basic/versioning#backward-compatibility (a -32022 names the supported versions)
 */
function discoverMiss(status: number, result: JsonObject | undefined, error: { code: number; data?: unknown } | undefined, modern: string): string {
  const versions = (v: unknown) => (Array.isArray(v) ? excerpt(JSON.stringify(v)) : undefined);
  const listed = status < 300 ? versions(result?.supportedVersions) : undefined;
  if (listed !== undefined) return `a DiscoverResult not listing ${modern} (supportedVersions ${listed})`;
  const supported = error?.code === -32022 ? versions((error.data as { supported?: unknown } | undefined)?.supported) : undefined;
  if (supported !== undefined) return `HTTP ${status}: -32022 not naming ${modern} among supported versions (${supported})`;
  return status < 300 ? 'not a DiscoverResult' : `HTTP ${status} without a modern error body`;
}

/** The ids of the probe's requests: server/discover, initialize, and initialize over HTTP+SSE. */
const DISCOVER_ID = 'switchyard-probe-1';
const INITIALIZE_ID = 'switchyard-probe-2';
const SSE_INITIALIZE_ID = 'switchyard-probe-3';

/**
 * Why `msg` is not the answer to request `id`, or undefined when it is (or when there is no
 * message). A response carries its request's id; an error response may carry null instead, when
 * the server could not read the id. Any other id answers some other request, whatever it says.
 * A reply with the id that carries both `result` and `error`, or neither, is no response either:
 * neither its result nor its error is era evidence.
 * @see JSON-RPC 2.0 §5 (Response object: id; "Either the result member or error member MUST be
 *   included, but both members MUST NOT be included")
 */
function notAnswerTo(msg: JsonObject | undefined, id: string): string | undefined {
  if (msg === undefined) return undefined;
  if (msg.id === id) {
    const hasResult = 'result' in msg;
    // JSON-RPC 2.0 §5: exactly one of result and error.
    if (hasResult !== 'error' in msg) return undefined;
    return `the reply carries ${hasResult ? 'both result and error' : 'neither result nor error'}: not a valid response (JSON-RPC 2.0 §5)`;
  }
  if (msg.id === null && 'error' in msg && !('result' in msg)) return undefined;
  const got = msg.id === undefined ? 'no id' : `id ${JSON.stringify(msg.id)}`;
  return `the reply has ${got}, not the request's "${id}": not an answer to it (JSON-RPC 2.0 §5)`;
}

/**
 * Probes `url` as the spec's backwards-compatibility sections describe (digest README "Era
 * detection"): first a modern `server/discover` (a result, or a recognisable modern error body,
 * means 2026-07-28); then `initialize` (success: the 2025 era; a -32022 naming 2026-07-28 ends
 * the probe without an era: the server is stateless, but its server/discover failed); any other
 * 400, 404 or 405 to that means GET the same URL and expect an `endpoint` event first
 * (HTTP+SSE). 401, 403 and a 400 whose Bearer challenge carries an `error` (`invalid_request`: a
 * malformed `Authorization`) are authentication refusals, never era evidence, at either POST (the
 * reason tells a refused or malformed `Authorization` from a missing one by the Bearer
 * challenge's error code); a 5xx, a timeout or a reset is retried with backoff and never causes a
 * fallback (an answer over `maxUpstreamMessageBytes` ends the probe, not retried); redirects are
 * followed only to the same origin.
 * @see 2026-07-28 basic/versioning#backward-compatibility; 2025-11-25 basic/transports#backwards-compatibility
 * @returns a verdict; never throws for network or protocol trouble (it is in `reason`).
 */
export async function probeUrl(rawUrl: string, eras: EraClients, opts: ProbeOptions = {}): Promise<ProbeVerdict> {
  const steps: ProbeStep[] = [];
  const headers = opts.headers ?? {};
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LIMITS.upstreamProbeTimeoutMs;
  const tries = opts.tries ?? 3;
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const clientInfo = opts.clientInfo ?? { name: 'switchyard-probe', version: '1' };
  let url = rawUrl;
  const origin = new URL(rawUrl).origin;
  const path = () => new URL(url).pathname;
  const fail = (reason: string, networkError?: string, clientReason = reason, networkWords?: string): ProbeVerdict => ({
    ok: false,
    url,
    reason,
    clientReason,
    ...(networkError ? { networkError, networkWords: networkWords ?? 'network error' } : {}),
    steps,
  });
  /** An authentication refusal's verdict: the reason quoting the challenge, the client's without. */
  const refusedAuth = (answer: PostAnswer, hint: string) =>
    fail(
      authReason(answer.status, answer.headers, headers, hint, true, answerSaid(answer)),
      undefined,
      authReason(answer.status, answer.headers, headers, hint, false),
    );

  /** POSTs with retries on 5xx/timeout/reset and same-origin redirects. */
  const postStep = async (
    label: string,
    body: JsonObject,
    extra: Record<string, string>,
  ): Promise<{ answer: PostAnswer; first?: JsonObject } | { error: string; network: boolean; words?: string }> => {
    // Doubling up to the configured cap (docs/upstreams.md: upstreamBackoffMaxMs caps probe
    // retries): a start waits for its first attempt, retries included, before the MCP listener opens.
    const maxDelay = opts.backoffMaxMs ?? DEFAULT_LIMITS.upstreamBackoffMaxMs;
    let delay = Math.min(opts.backoffMs ?? DEFAULT_LIMITS.upstreamBackoffMinMs, maxDelay);
    let redirects = 0;
    for (let attempt = 1; ; attempt++) {
      const name = `POST ${path()} ${label}${attempt > 1 ? ` (try ${attempt})` : ''}`;
      try {
        const answer = await postMessage(url, body, { ...extra, ...headers }, limits, AbortSignal.timeout(timeoutMs), timeoutMs, opts.dispatcher);
        let first: JsonObject | undefined;
        // An SSE answer that is not JSON-RPC (invalid JSON in an event, an event over the bound)
        // came all the same: an answer without a usable message, like a JSON body that is none,
        // not a network failure to retry.
        let unreadable: string | undefined;
        if (answer.kind === 'sse' && answer.messages) {
          try {
            for await (const m of answer.messages) {
              // A response inside a batch answers no probe step (JSON-RPC 2.0 §6), as a JSON body that is an array does not.
              if (('result' in m || 'error' in m) && !isBatched(m)) {
                first = m;
                break;
              }
            }
          } catch (err) {
            if (!(err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_PROTOCOL')) throw err;
            unreadable = `${err.message} (${networkErrorText(err)})`;
          }
        }
        const redirect = judgeRedirect(answer.status, answer.headers, url, origin, redirects);
        if (redirect) {
          await drain(answer).catch(() => {});
          steps.push({ request: name, status: answer.status, note: redirect.note });
          if ('refuse' in redirect) return { error: redirect.operatorRefuse ?? redirect.refuse, network: false, words: redirect.refuse };
          redirects++;
          url = redirect.follow;
          // A redirect is not a try: the attempt count stays.
          attempt--;
          continue;
        }
        if (answer.status >= 500) {
          steps.push({ request: name, status: answer.status, excerpt: describe(answer, first), note: 'server error: retried, never a reason to fall back' });
          throw new Retryable(`HTTP ${answer.status}`);
        }
        steps.push({ request: name, status: answer.status, excerpt: describe(answer, first), ...(unreadable ? { error: unreadable } : {}), note: '' });
        return { answer, first };
      } catch (err) {
        // A body over maxUpstreamMessageBytes: the server answered, and asking again brings the
        // same bytes. Not retried, and no era evidence either way.
        if (err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_PROTOCOL') {
          steps.push({ request: name, error: err.message, note: 'an answer too large to read: not retried, not era evidence' });
          return { error: err.message, network: false };
        }
        // AbortSignal.timeout's reason says only 'The operation was aborted due to timeout'.
        const timedOut = (err as { name?: unknown } | null)?.name === 'TimeoutError';
        const text = err instanceof Retryable ? err.message : timedOut ? `no complete answer within ${timeoutMs} ms` : networkErrorText(err);
        if (!(err instanceof Retryable)) steps.push({ request: name, error: text, note: 'no answer: retried, never a reason to fall back' });
        if (attempt >= tries) return { error: text, network: !(err instanceof Retryable), words: timedOut ? text : networkErrorWords(err) };
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, maxDelay);
      }
    }
  };

  const note = (s: string) => {
    steps[steps.length - 1].note = s;
  };
  /**
   * Ends a session the probe opened (2025-11-25 basic/transports#session-management), within one
   * step's time, its answer's body included: nobody waits for that answer.
   */
  const endSession = async (sid: string, revision: string) => {
    await request(url, {
      dispatcher: opts.dispatcher,
      method: 'DELETE',
      headers: { ...headers, ...eras.sessions.sessionHeaders({ id: sid, revision }) },
      headersTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    })
      .then((r) => r.body.dump())
      .catch(() => {});
  };
  const initialize = () => postStep('initialize', { jsonrpc: '2.0', id: INITIALIZE_ID, ...eras.sessions.initialize({ capabilities: {}, clientInfo }) }, {});

  /** What server/discover got, for a reason that needs it (set once that step found no modern answer). */
  let discoverSaid: string | undefined;

  // 1. The modern probe.
  const disc = eras.stateless.discover(clientInfo);
  const discover = await postStep('server/discover', { jsonrpc: '2.0', id: DISCOVER_ID, ...disc }, eras.stateless.headers(disc.method, disc.params, []));
  if ('error' in discover)
    return fail(
      `no usable answer to server/discover: ${discover.error}`,
      discover.network ? discover.error : undefined,
      `no usable answer to server/discover: ${discover.words ?? discover.error}`,
      discover.words,
    );
  {
    const { answer, first } = discover;
    const body = (answer.kind === 'json' ? answer.json : first) as JsonObject | undefined;
    const stray = notAnswerTo(body, DISCOVER_ID);
    // A reply to another request is no evidence of anything: as if no JSON-RPC body came.
    const msg = stray ? undefined : body;
    const result = msg?.result as JsonObject | undefined;
    const error = msg?.error as { code: number; message: string; data?: unknown } | undefined;
    if (isAuthRefusal(answer.status, answer.headers)) {
      note(authNote(answer.status, answer.headers));
      return refusedAuth(answer, opts.credentialsHint ? ` (${opts.credentialsHint})` : '');
    }
    const modern =
      (answer.status < 300 && result !== undefined && eras.stateless.recognises({ result })) ||
      (error !== undefined && result === undefined && eras.stateless.recognises({ error }));
    if (modern) {
      note(result ? 'a DiscoverResult listing 2026-07-28: modern' : '-32022 naming 2026-07-28 among supported versions: modern');
      const desc = result ? eras.stateless.describe(result, '') : undefined;
      const verdict: ProbeVerdict = {
        ok: true,
        era: eras.stateless.revisions[0],
        transport: 'stateless-http',
        url,
        ...(desc && desc.serverInfo.name !== '' ? { serverInfo: desc.serverInfo } : {}),
        ...(desc ? { capabilities: desc.capabilities } : {}),
        steps,
      };
      if (opts.dualEra ?? true) {
        // A dual-era server opens 2025 sessions too; a modern-only one refuses, and a stateless
        // initialize-era fallback answers without a session (so the server cannot send requests on one).
        const init = await initialize();
        if (!('error' in init)) {
          const m = (init.answer.kind === 'json' ? init.answer.json : init.first) as JsonObject | undefined;
          const strayInit = notAnswerTo(m, INITIALIZE_ID);
          const r = strayInit ? undefined : (m?.result as JsonObject | undefined);
          const sid = headerOf(init.answer.headers, 'mcp-session-id');
          if (init.answer.status < 300 && r && typeof r.protocolVersion === 'string' && sid) {
            await endSession(sid, r.protocolVersion);
            if (unspoken(r.protocolVersion, eras.sessions.revisions)) note(`${atUnspoken(r.protocolVersion)}: modern only`);
            else {
              note(`${atRevision(r.protocolVersion)} with a session: dual-era`);
              verdict.alsoSessions = r.protocolVersion;
            }
          } else note(strayInit ? `${strayInit}: modern only` : sid ? 'no InitializeResult: modern only' : 'no 2025 session: modern only');
        }
      }
      return verdict;
    }
    if (stray) note(`${stray}: try initialize`);
    else note(`${discoverMiss(answer.status, result, error, eras.stateless.revisions[0])}${answer.status < 300 ? wrongType(answer) : ''}: try initialize`);
    discoverSaid = answer.status < 300 ? `HTTP ${answer.status} without a DiscoverResult` : `HTTP ${answer.status}`;
  }

  // 2. initialize (2025 era).
  const init = await initialize();
  if ('error' in init)
    return fail(
      `no usable answer to initialize: ${init.error}`,
      init.network ? init.error : undefined,
      `no usable answer to initialize: ${init.words ?? init.error}`,
      init.words,
    );
  {
    const { answer, first } = init;
    const body = (answer.kind === 'json' ? answer.json : first) as JsonObject | undefined;
    const stray = notAnswerTo(body, INITIALIZE_ID);
    const msg = stray ? undefined : body;
    const result = msg?.result as JsonObject | undefined;
    if (isAuthRefusal(answer.status, answer.headers)) {
      note(authNote(answer.status, answer.headers));
      return refusedAuth(answer, '');
    }
    if (answer.status < 300 && result && typeof result.protocolVersion === 'string') {
      const sid = headerOf(answer.headers, 'mcp-session-id');
      if (sid) await endSession(sid, result.protocolVersion);
      const refused = unspoken(result.protocolVersion, eras.sessions.revisions);
      if (refused) {
        note(atUnspoken(result.protocolVersion));
        return fail(refused);
      }
      note(`${atRevision(result.protocolVersion)}: Streamable HTTP`);
      return {
        ok: true,
        era: result.protocolVersion,
        transport: 'streamable-http',
        url,
        serverInfo: result.serverInfo as JsonObject,
        capabilities: result.capabilities as JsonObject,
        steps,
      };
    }
    // 2026-07-28 basic/versioning#backward-compatibility: a 400, 404 or 405 means HTTP+SSE only
    // when its body is not a recognised modern error. A -32022 naming 2026-07-28 says the server
    // is stateless (a modern-only server SHOULD name its versions so): no fallback, whatever
    // server/discover got.
    const error = msg?.error as { code: number; message: string; data?: unknown } | undefined;
    if (error !== undefined && result === undefined && eras.stateless.recognises({ error })) {
      const modern = eras.stateless.revisions[0];
      note(`-32022 naming ${modern} among supported versions: a stateless server, not a reason to fall back`);
      return fail(
        `the server names ${modern} in its refusal of initialize, but server/discover got ${discoverSaid ?? 'no DiscoverResult'} (no fallback to HTTP+SSE)`,
      );
    }
    if (![400, 404, 405].includes(answer.status)) {
      // A success status without an InitializeResult: say so, not only the status.
      const none = answer.status < 300 && !stray && !msg?.error ? ` without an InitializeResult${wrongType(answer)}` : '';
      note(
        stray
          ? `${stray}; HTTP ${answer.status} is not a fallback status (400, 404, 405)`
          : `HTTP ${answer.status}${none} is not a fallback status (400, 404, 405)`,
      );
      const answered = `initialize answered HTTP ${answer.status}`;
      if (stray || !msg?.error) return fail(`${answered}${stray ? `: ${stray}` : none}`);
      return fail(`${answered} with ${JSON.stringify(msg.error)}`, undefined, `${answered} with ${rpcErrorWords(msg.error)}`);
    }
    note(`HTTP ${answer.status}: fall back to HTTP+SSE (GET, expect an endpoint event)`);
  }

  // 3. GET, expecting an `endpoint` event first (2024-11-05 basic/transports).
  const sse = await openHttpSseStream(url, headers, timeoutMs, eras.httpSse, { ...limits, upstreamRequestTimeoutMs: timeoutMs }, opts.dispatcher);
  const getStep = () => `GET ${path()} (Accept: text/event-stream)`;
  // The two POSTs above fell back before this GET: hence "either".
  const sseNote = sse.answered !== undefined ? `no HTTP+SSE stream either (${sse.answered})` : sse.note;
  for (const r of sse.redirects) {
    url = r.url;
    steps.push({ request: getStep(), status: r.status, note: r.note });
  }
  // A refused redirect is the last step: its note says why, and the reason repeats it.
  if (sse.redirects.every((r) => r.followed)) {
    url = sse.url;
    steps.push({ request: getStep(), status: sse.status, excerpt: excerpt(sse.excerpt), error: sse.error, note: sseNote });
  }
  if (!sse.endpoint) {
    sse.close();
    return fail(sse.error ? `${sse.note}: ${sse.error}` : (sse.operatorNote ?? sseNote), sse.error, sseNote, sse.clientError);
  }
  const warnings: string[] = [];
  if (sse.beforeCount > 0) {
    // 2024-11-05 basic/transports: "the server MUST send an endpoint event" on connect, first.
    // The gateway's connector tolerates it (as the SDK's SSE client does); a client that waits
    // for endpoint as the first event may not.
    const n = sse.beforeCount;
    const broke = `the endpoint event came after ${n} other event${n === 1 ? '' : 's'} (${sse.before.join(', ')}): 2024-11-05 has the server send it first`;
    warnings.push(broke);
    note(`${sse.note}; but ${broke} (tolerated)`);
  }
  let serverInfo: JsonObject | undefined;
  let capabilities: JsonObject | undefined;
  let era: string = eras.httpSse.initialize({ capabilities: {}, clientInfo }).params.protocolVersion as string;
  // Replies the stream carries for no request of ours (the call waits for its own id only).
  let strayReply: JsonObject | undefined;
  // Whether initialize got a reply with its id (a result or an error), and why its POST failed.
  let answered = false;
  let failure: string | undefined;
  sse.onMessage = (m) => {
    if (m.method === undefined && ('result' in m || 'error' in m)) strayReply ??= m;
  };
  try {
    const init = await sse.call({ jsonrpc: '2.0', id: SSE_INITIALIZE_ID, ...eras.httpSse.initialize({ capabilities: {}, clientInfo }) }, timeoutMs);
    const stray =
      init.reply || !strayReply ? undefined : (notAnswerTo(strayReply, SSE_INITIALIZE_ID) ?? 'an error with id null (the server could not read the request)');
    // The reply with its id, but with both result and error (or neither): neither is read.
    const invalid = init.reply ? notAnswerTo(init.reply, SSE_INITIALIZE_ID) : undefined;
    // An error response to initialize: the server read the request and refused it. As for
    // Streamable HTTP (where it fails the probe), no client can connect; here the endpoint event
    // has named the era, so the verdict stands with a warning. The server's words (its error's
    // message, which may repeat a credential sent) go to the warning and the step only, which
    // the operator reads; the gateway's connector then fails on its own initialize, telling a
    // client the error code alone.
    const refusal = init.reply && !invalid && 'error' in init.reply ? init.reply.error : undefined;
    const but = invalid ? `; but ${invalid}` : refusal !== undefined ? '; but it is an error, not an InitializeResult' : '';
    // A POST the endpoint did not accept (3xx-5xx) gets no reply on the stream: said as such, at once.
    if (init.refusedText !== undefined) failure = `POST answered HTTP ${init.postStatus}`;
    // JSON-RPC 2.0 §6: the reply inside a JSON array answers a batch, never a request sent alone.
    if (init.batched) failure = 'its reply came inside a JSON array (a batch)';
    steps.push({
      request: `POST ${new URL(sse.endpoint).pathname} initialize`,
      status: init.postStatus,
      // The POST's own answer is shown only when it holds the reply or a refusal; a reply read from
      // the stream is not the 202's body, and is shown apart from it.
      ...(init.batched
        ? {}
        : init.refusedText !== undefined
          ? { excerpt: excerpt(init.refusedText) }
          : init.inBody
            ? { excerpt: excerpt(JSON.stringify(init.reply)) }
            : init.reply !== undefined || strayReply !== undefined
              ? { streamReply: excerpt(JSON.stringify(init.reply ?? strayReply)) }
              : {}),
      note: init.batched
        ? `the reply with its id came inside a JSON array (a batch), ${init.inBody ? "in the POST's answer" : 'on the stream'}: a batch answers only a batch`
        : init.inBody
          ? `reply read from the POST's answer (HTTP ${init.postStatus}), not from the stream (tolerated)${but}`
          : init.reply
            ? `reply read from the stream${but}`
            : init.refusedText !== undefined
              ? `the endpoint did not accept initialize (HTTP ${init.postStatus}): no reply to wait for`
              : stray
                ? `${stray}; no reply with its id within ${timeoutMs} ms`
                : `no reply on the stream within ${timeoutMs} ms`,
    });
    // 2024-11-05 basic/transports: replies go on the stream as `message` events. The gateway's
    // connector takes one in the POST's answer too, as the probe does; said, as a rule broken.
    if (init.inBody)
      warnings.push(
        `the endpoint answered initialize in the POST's own answer (HTTP ${init.postStatus}): 2024-11-05 has the server send replies on the stream`,
      );
    answered = init.reply !== undefined;
    if (invalid) warnings.push(`initialize: ${invalid}: the endpoint event names the era, but no client can connect to this server`);
    if (refusal !== undefined)
      warnings.push(`initialize answered with ${excerpt(JSON.stringify(refusal))}: the endpoint event names the era, but no client can connect to this server`);
    const result = invalid ? undefined : (init.reply?.result as JsonObject | undefined);
    serverInfo = result?.serverInfo as JsonObject | undefined;
    capabilities = result?.capabilities as JsonObject | undefined;
    if (typeof result?.protocolVersion === 'string') {
      const refused = unspoken(result.protocolVersion, eras.httpSse.revisions);
      if (refused) {
        steps[steps.length - 1].note = atUnspoken(result.protocolVersion);
        return fail(refused);
      }
      era = result.protocolVersion;
    }
  } catch (err) {
    failure = networkErrorText(err);
    steps.push({
      request: `POST ${new URL(sse.endpoint).pathname} initialize`,
      error: failure,
      note: 'the endpoint event came, but initialize got no reply',
    });
  } finally {
    sse.close();
  }
  // The endpoint event names the era, so the verdict stands; but no client could connect, and a
  // gateway in front of this server would not start it (initialize fails): said, not hidden.
  if (!answered)
    warnings.push(
      `${failure !== undefined ? `initialize failed (${failure})` : `initialize got no reply with its id within ${timeoutMs} ms`}: the endpoint event names the era, but no client can connect to this server`,
    );
  return { ok: true, era, transport: 'http+sse', url, endpoint: sse.endpoint, serverInfo, capabilities, ...(warnings.length > 0 ? { warnings } : {}), steps };
}
