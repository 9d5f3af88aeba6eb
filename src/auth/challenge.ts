// The Bearer scheme on the wire: parsing `Authorization` and building `WWW-Authenticate` challenges.

import { SwitchyardError, type ErrorCode } from '../core/errors.js';

/** Longest bearer token accepted, characters; longer ones are refused before any verification. */
export const MAX_TOKEN_CHARS = 16_384;

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
// RFC 9110 §5.6.2: token = 1*tchar
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 6749 §3.3 / RFC 6750 §3: scope-token = 1*NQCHAR, NQCHAR = %x21 / %x23-5B / %x5D-7E
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
// RFC 9110 §5.6.4: what a quoted-string can carry (qdtext and quoted-pair), limited to ASCII.
const QUOTABLE = /^[\t\x20-\x7E]*$/;

/**
 * Reads the bearer token out of an `Authorization` header value.
 *
 * - absent or empty: `null` (no credential);
 * - another scheme (`Basic …`, `DPoP …`): `null`, because RFC 6750 §3.1 treats an unsupported
 *   method like a missing credential (challenge without an error code);
 * - `Bearer` (any case) followed by one or more spaces and exactly one `b64token`: the token.
 *
 * Surrounding spaces and tabs (HTTP optional whitespace) are ignored. A repeated header joined
 * with `, ` (as Fetch `Headers` join it) is malformed.
 * @param value the header value, as received.
 * @returns the token, or null when there is no Bearer credential.
 * @throws SwitchyardError SWY_ERR_AUTH_INVALID_REQUEST (malformed Bearer credential or scheme),
 *   SWY_ERR_AUTH_TOKEN_TOO_LONG (more than {@link MAX_TOKEN_CHARS} characters). Neither carries
 *   `WWW-Authenticate` yet: add it with {@link withChallenge}.
 * @see RFC 6750 §2.1 (syntax), §3.1 (error codes); RFC 9110 §11.6.2 (Authorization)
 */
export function parseAuthorization(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  const v = value.replace(/^[ \t]+|[ \t]+$/g, '');
  if (v === '') return null;
  const sp = v.indexOf(' ');
  const scheme = sp === -1 ? v : v.slice(0, sp);
  if (!TOKEN.test(scheme)) throw new SwitchyardError('SWY_ERR_AUTH_INVALID_REQUEST', { detail: 'the authorization scheme is not a token' });
  if (scheme.toLowerCase() !== 'bearer') return null;
  if (sp === -1) throw new SwitchyardError('SWY_ERR_AUTH_INVALID_REQUEST', { detail: 'the Bearer credential is empty' });
  // RFC 6750 §2.1: "Bearer" 1*SP b64token
  const token = v.slice(sp).replace(/^ +/, '');
  if (token.length > MAX_TOKEN_CHARS) throw new SwitchyardError('SWY_ERR_AUTH_TOKEN_TOO_LONG', { detail: `more than ${MAX_TOKEN_CHARS} characters` });
  if (!B64TOKEN.test(token)) throw new SwitchyardError('SWY_ERR_AUTH_INVALID_REQUEST', { detail: 'the Bearer credential is not exactly one b64token' });
  return token;
}

/** RFC 6750 §3.1 error codes a Bearer challenge may carry. */
export type BearerErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/** What one Bearer challenge says. */
export interface ChallengeParams {
  /** The protected resource metadata URL (RFC 9728 §5.1 `resource_metadata`); absolute URL. */
  resourceMetadata: string;
  /** Omitted when the request carried no credential (RFC 6750 §3.1). */
  error?: BearerErrorCode;
  /** Human-readable reason, printable ASCII without `"` or `\` (RFC 6750 §3). */
  errorDescription?: string;
  /** Scopes the resource needs, all of them (RFC 6750 §3; 2025-11-25 basic/authorization, scope challenge). */
  scope?: readonly string[];
}

/**
 * Quotes `value` as an RFC 9110 §5.6.4 quoted-string: `"` and `\` are escaped with `\`.
 * @throws SwitchyardError SWY_ERR_INTERNAL_FAULT when `value` has a control character or a
 *   non-ASCII one (a header cannot carry it faithfully).
 */
export function quoteString(value: string): string {
  if (!QUOTABLE.test(value)) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'a challenge parameter holds a character a header cannot carry' });
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * Builds one `WWW-Authenticate` value for the Bearer scheme:
 * `Bearer resource_metadata="…"[, error="…"][, error_description="…"][, scope="a b"]`.
 * @throws SwitchyardError SWY_ERR_INTERNAL_FAULT when a scope is not an RFC 6749 §3.3
 *   scope-token or a value cannot be quoted (see {@link quoteString}).
 * @see RFC 6750 §3; RFC 9728 §5.1; RFC 9110 §11.6.1
 */
export function buildChallenge(p: ChallengeParams): string {
  const parts = [`resource_metadata=${quoteString(p.resourceMetadata)}`];
  if (p.error !== undefined) parts.push(`error=${quoteString(p.error)}`);
  if (p.errorDescription !== undefined) parts.push(`error_description=${quoteString(p.errorDescription)}`);
  if (p.scope !== undefined && p.scope.length > 0) {
    for (const s of p.scope)
      if (!SCOPE_TOKEN.test(s)) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'a scope is not an RFC 6749 scope-token' });
    parts.push(`scope=${quoteString(p.scope.join(' '))}`);
  }
  return `Bearer ${parts.join(', ')}`;
}

/** Which challenge error each authentication code carries (none for a missing credential). */
const ERROR_OF: Partial<Record<ErrorCode, BearerErrorCode>> = {
  SWY_ERR_AUTH_INVALID_REQUEST: 'invalid_request',
  SWY_ERR_AUTH_TOKEN_TOO_LONG: 'invalid_request',
  SWY_ERR_AUTH_INVALID_TOKEN: 'invalid_token',
  SWY_ERR_AUTH_INSUFFICIENT_SCOPE: 'insufficient_scope',
};

/** The codes that answer with a Bearer challenge. */
export const CHALLENGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['SWY_ERR_AUTH_REQUIRED', ...(Object.keys(ERROR_OF) as ErrorCode[])]);

/**
 * An authentication error with its `WWW-Authenticate` header: 401 without an error code for
 * SWY_ERR_AUTH_REQUIRED, `invalid_request` (400), `invalid_token` (401) or `insufficient_scope`
 * (403) for the others. `scope` goes into the challenge of a missing credential and of
 * insufficient scope (the full set the resource needs).
 * @param code one of {@link CHALLENGE_CODES}.
 * @param resource `prmUrl`: the mount's protected resource metadata URL.
 * @param opts `detail` for the message (and `error_description`), `scope`, `cause`.
 * @throws SwitchyardError SWY_ERR_INTERNAL_FAULT for a code without a challenge.
 * @see RFC 6750 §3, §3.1; RFC 9728 §5.1
 */
export function challengeError(
  code: ErrorCode,
  resource: { prmUrl: string },
  opts: { detail?: string; scope?: readonly string[]; cause?: unknown } = {},
): SwitchyardError {
  if (!CHALLENGE_CODES.has(code)) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: `${code} has no Bearer challenge` });
  const error = ERROR_OF[code];
  const header = buildChallenge({
    resourceMetadata: resource.prmUrl,
    error,
    errorDescription: error !== undefined && error !== 'insufficient_scope' ? opts.detail : undefined,
    scope: error === undefined || error === 'insufficient_scope' ? opts.scope : undefined,
  });
  return new SwitchyardError(code, { detail: opts.detail, cause: opts.cause, headers: { 'WWW-Authenticate': header } });
}

/**
 * The same error with the Bearer challenge added, when its code has one (parse errors from
 * {@link parseAuthorization}); any other error is returned unchanged.
 */
export function withChallenge(err: unknown, resource: { prmUrl: string }, scope?: readonly string[]): unknown {
  if (!(err instanceof SwitchyardError) || !CHALLENGE_CODES.has(err.code) || err.headers?.['WWW-Authenticate'] !== undefined) return err;
  return challengeError(err.code, resource, { detail: err.detail, scope, cause: err.cause });
}
