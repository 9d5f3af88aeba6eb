// The verified caller: what authentication (or a host application) hands the core. Never built
// from `_meta`, query strings or unverified headers.

import { createHash } from 'node:crypto';
import { SwitchyardError } from './errors.js';

/** How an identity was established. */
export type IdentitySource =
  /** A JWT access token verified against the issuer's JWKS (RFC 9068, RFC 7519). */
  | 'jwt'
  /** An opaque token accepted by the issuer's introspection endpoint (RFC 7662). */
  | 'introspection'
  /** A static API key from the config (`auth.apiKeys`). */
  | 'api-key'
  /** The local user of a stdio front door (2025-11-25 basic/authorization: stdio takes credentials from the environment). */
  | 'local'
  /** Handed in by an embedding application that authenticated the request itself. */
  | 'host';

/**
 * A verified principal. Secrets (the token itself) are never part of it.
 * @see RFC 9068 §2.2 (claims of JWT access tokens); 2025-11-25 basic/authorization
 */
export interface Identity {
  /** The issuer (`iss`), or `switchyard:api-key`, `switchyard:local`, `switchyard:host`. */
  readonly issuer: string;
  /** The subject (`sub`): who the principal is, unique within `issuer`. */
  readonly subject: string;
  /** The OAuth client the token was issued to (`client_id` or `azp`), when known. */
  readonly clientId?: string;
  /**
   * Granted scopes (`scope` split on spaces, or the API key's list), followed by every scope they
   * imply under the authenticating `auth.bearer.scopeImplies` (none when it is absent).
   */
  readonly scopes: readonly string[];
  /** Selected claims (configurable; never the raw token), for policy rules. */
  readonly claims: Readonly<Record<string, unknown>>;
  /** How it was verified. */
  readonly source: IdentitySource;
  /** When the credential expires, ms since the epoch (`exp` × 1000), when known. */
  readonly expiresAtMs?: number;
}

const SOURCES: ReadonlySet<string> = new Set<IdentitySource>(['jwt', 'introspection', 'api-key', 'local', 'host']);

/** What is wrong with `v` as an {@link Identity}, or undefined when nothing is (values are never named: a host may hand in a token by mistake). */
function identityFault(v: unknown): string | undefined {
  if (typeof v !== 'object') return `a ${typeof v}, not an Identity object`;
  if (v === null || Array.isArray(v)) return `${v === null ? 'null' : 'an array'}, not an Identity object`;
  const id = v as Record<string, unknown>;
  if (typeof id.issuer !== 'string' || id.issuer === '') return '`issuer` must be a non-empty string';
  if (typeof id.subject !== 'string' || id.subject === '') return '`subject` must be a non-empty string';
  if (!Array.isArray(id.scopes) || !id.scopes.every((s) => typeof s === 'string')) return '`scopes` must be an array of strings';
  if (typeof id.claims !== 'object' || id.claims === null || Array.isArray(id.claims)) return '`claims` must be an object';
  if (typeof id.source !== 'string' || !SOURCES.has(id.source)) return '`source` must be one of jwt, introspection, api-key, local, host';
  if (id.clientId !== undefined && typeof id.clientId !== 'string') return '`clientId` must be a string when present';
  if (id.expiresAtMs !== undefined && !Number.isFinite(id.expiresAtMs)) return '`expiresAtMs` must be a finite number when present';
  return undefined;
}

/**
 * The identity an embedding host handed in, checked against {@link Identity} before anything
 * uses it (sessions are bound to `issuer` and `subject`, policy reads `scopes` and `claims`):
 * null or undefined mean unauthenticated (null); an identity is returned as it is.
 * `hostIdentity()` (src/index.ts) builds a valid one.
 * @throws SwitchyardError SWY_ERR_HOST_IDENTITY_INVALID saying what is wrong (never the value itself)
 */
export function checkHostIdentity(value: unknown): Identity | null {
  if (value === null || value === undefined) return null;
  const fault = identityFault(value);
  if (fault !== undefined) throw new SwitchyardError('SWY_ERR_HOST_IDENTITY_INVALID', { detail: `${fault}; build it with hostIdentity()` });
  return value as Identity;
}

// RFC 9110 §5.5: what a field value may hold here (visible ASCII, spaces and tabs), so that a
// host's own challenge can never make the answer's head fail to write.
const FIELD_VALUE = /^[\x21-\x7E](?:[\t\x20-\x7E]*[\x21-\x7E])?$/;

/** The `WWW-Authenticate` of a host's HTTP error (`headers`, any case; a list joined with `, `), when it is a clean field value. */
function hostChallenge(headers: unknown): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (name.toLowerCase() !== 'www-authenticate') continue;
    const joined: unknown = Array.isArray(value) && value.every((v) => typeof v === 'string') ? value.join(', ') : value;
    return typeof joined === 'string' && FIELD_VALUE.test(joined) ? joined : undefined;
  }
  return undefined;
}

/**
 * The refusal an embedding host's `identity(request)` asked for by throwing `err`: an error whose
 * `statusCode` (else `status`, as fastify's own error handler reads it; the shape of fastify's,
 * `@fastify/error`'s and `http-errors`' errors) is 401 or 403. Its `WWW-Authenticate` (from
 * `err.headers`) goes with it; a 401 without one says `Bearer`. Anything else is undefined: not a
 * refusal, a fault of the host's code.
 * @returns SwitchyardError SWY_ERR_HOST_UNAUTHENTICATED (401) or SWY_ERR_HOST_FORBIDDEN (403), `err` as its cause
 * @see RFC 9110 §11.6.1 (a 401 sends at least one challenge), §15.5.2, §15.5.4
 */
export function hostRefusal(err: unknown): SwitchyardError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { statusCode?: unknown; status?: unknown; headers?: unknown };
  const status = e.statusCode ?? e.status;
  if (status !== 401 && status !== 403) return undefined;
  const challenge = hostChallenge(e.headers) ?? (status === 401 ? 'Bearer' : undefined);
  const headers = challenge === undefined ? undefined : { 'www-authenticate': challenge };
  return new SwitchyardError(status === 401 ? 'SWY_ERR_HOST_UNAUTHENTICATED' : 'SWY_ERR_HOST_FORBIDDEN', { cause: err, headers });
}

/**
 * A stable, non-reversible key for a principal (SHA-256 over issuer and subject, base64url,
 * 22 characters), used to bind sessions and held calls to the principal that opened them.
 * `null` (no authentication) has its own key, so an anonymous session cannot be taken over
 * by an authenticated caller and the other way round.
 */
export function principalKey(id: Identity | null): string {
  // Asked on every request of a session: computed once per identity object (the anonymous key once).
  if (id === null) return (anonymousKey ??= hashPrincipal(null));
  let key = keys.get(id);
  if (key === undefined) keys.set(id, (key = hashPrincipal(id)));
  return key;
}

/**
 * A key equal for two identities when everything a policy rule reads of them (`principal.iss`,
 * `sub`, `client_id`, `scopes`, `claims`; docs/policy.md) is: what a caller may see depends on
 * nothing else of the caller, so a result filtered for one caller may be reused for another with
 * the same key. SHA-256 of those fields' JSON, base64url, 22 characters; `""` for anonymous.
 * Computed once per identity object (an identity is immutable).
 */
export function policyViewKey(id: Identity | null): string {
  if (id === null) return '';
  let key = viewKeys.get(id);
  if (key === undefined) {
    const fields = [id.issuer, id.subject, id.clientId ?? '', id.scopes, id.claims];
    viewKeys.set(id, (key = createHash('sha256').update(JSON.stringify(fields)).digest('base64url').slice(0, 22)));
  }
  return key;
}

const viewKeys = new WeakMap<Identity, string>();

let anonymousKey: string | undefined;
// An identity is immutable (readonly fields; verified ones are frozen), so an object's key never changes; weakly held.
const keys = new WeakMap<Identity, string>();

function hashPrincipal(id: Identity | null): string {
  const h = createHash('sha256');
  if (id === null) h.update('anonymous');
  else h.update(id.issuer).update('\0').update(id.subject);
  return h.digest('base64url').slice(0, 22);
}

/**
 * A digest that stands for a key that must not appear in the clear (a session id, a bucket key):
 * SHA-256 of its UTF-8, base64url, 22 characters (132 bits). The cluster names Redis keys by it
 * (src/cluster/redis.ts re-exports it), and sessions are logged by it.
 */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('base64url').slice(0, 22);
}

/**
 * The name a session id has in logs, on the diagnostics channels and on spans (`mcp.session.id`):
 * its {@link keyDigest} (22 base64url characters). A session id is a bearer credential
 * (2025-11-25 basic/transports#session-management), so it is never logged or traced as it is;
 * with or without replicas, a session has this one name, and a span can be found from its log
 * lines and back.
 */
export function sessionLogId(sessionId: string): string {
  return keyDigest(sessionId);
}
