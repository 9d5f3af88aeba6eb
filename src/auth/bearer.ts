// Verifies OAuth 2.1 access tokens of one issuer: JWTs against its JWKS (jose), opaque tokens by RFC 7662 introspection.

import crypto, { createHash } from 'node:crypto';
import { createRemoteJWKSet, customFetch, decodeProtectedHeader, errors as jose, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { SwitchyardError } from '../core/errors.js';
import type { Identity } from '../core/identity.js';
import type { Logger } from '../log/logger.js';
import { challengeError } from './challenge.js';
import { ASYMMETRIC_ALGORITHMS, resolveBearerConfig, type BearerConfig, type ResolvedBearerConfig } from './config.js';
import { createMetadataSource, DISCOVERY_RETRY_SEC } from './discovery.js';
import { basicAuth, fetchBounded, jsonObject } from './fetch.js';
import { canonicalResource, prmUrl } from './prm.js';
import { compileScopeHierarchy, insufficientScope, type ScopeHierarchy } from './scopes.js';

/** A mount as a protected resource: its canonical URI (the default audience) and its metadata URL (for challenges). */
export interface ResourceRef {
  /** The canonical resource URI clients call, e.g. `https://gw.example.com/mcp` (RFC 8707). */
  uri: string;
  /** Its RFC 9728 metadata URL, named in `WWW-Authenticate` (`resource_metadata`). */
  prmUrl: string;
}

/** Verifies access tokens for any number of resources. */
export interface BearerVerifier {
  /**
   * Verifies `token` for `resource` and returns who it stands for. A JWT (three base64url
   * segments) is verified locally; anything else is introspected when introspection is
   * configured, and refused otherwise.
   * @param resource the mount (a string is its canonical URI; the metadata URL is derived with RFC 9728 §3.1).
   * @returns an Identity with `source` `jwt` or `introspection`.
   * @throws SwitchyardError SWY_ERR_AUTH_INVALID_TOKEN (401) or SWY_ERR_AUTH_INSUFFICIENT_SCOPE
   *   (403), each with its `WWW-Authenticate`; SWY_ERR_AUTH_ISSUER_UNAVAILABLE (503, `Retry-After`);
   *   SWY_ERR_AUTH_INTROSPECTION_BUSY (503, `Retry-After: 1`) when `introspection.maxConcurrent`
   *   introspection requests are in flight and this token is not among them.
   * @see RFC 9068 §4 (validating JWT access tokens); RFC 7662 §2; RFC 6750 §3.1
   */
  verify(token: string, resource: string | ResourceRef, opts?: VerifyOptions): Promise<Identity>;
  /** The scopes every token must grant (`scopes`), for challenges. */
  readonly requiredScopes: readonly string[];
}

/** How one verification may wait. */
export interface VerifyOptions {
  /**
   * Wait for a place among `introspection.maxConcurrent` instead of being refused
   * SWY_ERR_AUTH_INTROSPECTION_BUSY at once (a check in the background: an open stream's
   * credential checked again at a reload or its expiry). Waiters take freed places before new
   * requests, first come first served; at most {@link MAX_INTROSPECTION_WAITERS} wait (one more
   * is refused BUSY).
   */
  waitForPlace?: boolean;
}

/** Verifications waiting for an introspection place at most, per verifier ({@link VerifyOptions.waitForPlace}). */
export const MAX_INTROSPECTION_WAITERS = 1024;

/** Optional collaborators of {@link createBearerVerifier}. */
export interface BearerVerifierDeps {
  /** Logs discovery and JWKS events (never a token; at most its SHA-256). */
  log?: Logger;
  /**
   * `opts.scopeImplies` already compiled ({@link compileScopeHierarchy}), when the caller has it:
   * `createAuthenticator` compiles it once for its API keys and its verifier. It must be compiled
   * from the same `scopeImplies`; when absent, the verifier compiles it itself.
   */
  scopeHierarchy?: ScopeHierarchy;
  /**
   * `opts` already validated, with its defaults ({@link resolveBearerConfig}), when the caller has
   * it: `createAuthenticator` validates the whole `auth` once. It must be `opts` resolved; when
   * absent, the verifier validates `opts` itself.
   */
  resolved?: ResolvedBearerConfig;
}

/** At most one JWKS refetch per this interval when a token names an unknown `kid`, ms. */
export const JWKS_COOLDOWN_MS = 60_000;

/** Verified JWTs remembered (LRU by SHA-256 of the token and the resource), so a token presented again skips the signature check; entries. */
export const VERIFIED_JWT_CACHE_ENTRIES = 10_000;

/**
 * How long a verified JWT is remembered at most, ms (and never past its `exp` plus the clock
 * tolerance): within this, a key the issuer withdraws is still trusted for tokens already seen.
 */
export const VERIFIED_JWT_TTL_MS = 60_000;

/**
 * How long an introspection answer `active: false` is remembered at most, ms (and never longer
 * than `introspection.cacheMaxMs`; 0 remembers nothing): the same bad token presented again within
 * it is refused without asking the authorization server. A token the server comes to call active
 * (which RFC 7662 gives no way to announce) is accepted at most this much later.
 * @see RFC 7662 §4 (caching responses); docs/security.md, "Choices made where the specification is silent"
 */
export const INACTIVE_TOKEN_TTL_MS = 10_000;

const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** True when `token` has the shape of a JWS compact serialization (three base64url segments, RFC 7515 §7.1). */
export function looksLikeJwt(token: string): boolean {
  return JWS_COMPACT.test(token);
}

// One-shot hashing (Node 20.12+) skips the Hash object; it runs once per request.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'base64url') => string }).hash;

/** SHA-256 of a token, base64url: the only form of a token that may be kept or logged. */
export function tokenHash(token: string): string {
  return oneShot ? oneShot('sha256', token, 'base64url') : createHash('sha256').update(token, 'utf8').digest('base64url');
}

/**
 * Creates a verifier for one issuer. Its metadata is discovered on first use (RFC 8414, then
 * OpenID Connect Discovery) and kept; the JWKS comes from its `jwks_uri` through jose's
 * `createRemoteJWKSet`, refetched for an unknown `kid`, or for a known one whose signature fails
 * (a key replaced under its `kid`), at most once per {@link JWKS_COOLDOWN_MS}. Opaque tokens:
 * concurrent verifications of one token share one introspection request, and at most
 * `introspection.maxConcurrent` are in flight.
 * @param opts the `auth.bearer` config; validated here (or by the caller: `deps.resolved`), defaults from `src/auth/schema.json`. Its
 *   `scopeImplies` is closed once (here, or by the caller: `deps.scopeHierarchy`): each verified
 *   identity's `scopes` are the token's plus every scope they imply, and `scopes` (required) is
 *   judged against that.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when `opts` fails the schema.
 * @see RFC 9068; RFC 8725 §3.1 (algorithm allowlist); RFC 8707 (audience); RFC 7662
 */
export function createBearerVerifier(opts: BearerConfig, deps: BearerVerifierDeps = {}): BearerVerifier {
  // Validated once, here or by the caller (createAuthenticator validated the whole `auth`).
  const cfg: ResolvedBearerConfig = deps.resolved ?? resolveBearerConfig(opts);
  const log = deps.log;
  // RFC 8725 §3.1: never `none`, never a symmetric algorithm (key confusion with the public key).
  const algorithms = cfg.algorithms.filter((a) => (ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a));
  const configuredAudience =
    cfg.audience === undefined ? undefined : (typeof cfg.audience === 'string' ? [cfg.audience] : [...cfg.audience]).map(canonicalResource);
  // Closed once, here or by the caller: a verified identity's scopes are its granted ones plus all they imply.
  const hierarchy = deps.scopeHierarchy ?? compileScopeHierarchy(cfg.scopeImplies);
  const metadata = createMetadataSource({ issuer: cfg.issuer, timeoutMs: cfg.timeoutMs, code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE', log });

  // One key set per verifier, created once the metadata names it (concurrent first requests share it).
  let jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  let jwksFailedAtMs = 0;
  let jwksError: SwitchyardError | undefined;
  const unavailable = (err: SwitchyardError, failedAtMs: number) => {
    const leftSec = Math.max(1, Math.ceil((failedAtMs + DISCOVERY_RETRY_SEC * 1000 - Date.now()) / 1000));
    return new SwitchyardError('SWY_ERR_AUTH_ISSUER_UNAVAILABLE', { message: err.message, cause: err.cause, headers: { 'Retry-After': String(leftSec) } });
  };

  function keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    jwks ??= remoteKeySet().catch((err: unknown) => {
      jwks = undefined;
      throw err;
    });
    return jwks;
  }

  async function remoteKeySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const md = await metadata.get();
    if (typeof md.jwks_uri !== 'string') throw new SwitchyardError('SWY_ERR_AUTH_ISSUER_UNAVAILABLE', { detail: 'the issuer metadata has no jwks_uri' });
    const jwksUri = md.jwks_uri;
    return createRemoteJWKSet(new URL(jwksUri), {
      cooldownDuration: JWKS_COOLDOWN_MS,
      timeoutDuration: cfg.timeoutMs,
      [customFetch]: async () => {
        // A failing JWKS endpoint is not asked again for a while: jose itself would retry on every request.
        if (jwksError && Date.now() < jwksFailedAtMs + DISCOVERY_RETRY_SEC * 1000) throw jwksError;
        try {
          const res = await fetchBounded(jwksUri, {
            timeoutMs: cfg.timeoutMs,
            code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
            what: 'JWKS',
            headers: { accept: 'application/json, application/jwk-set+json' },
          });
          if (res.status !== 200) throw new SwitchyardError('SWY_ERR_AUTH_ISSUER_UNAVAILABLE', { detail: `JWKS answered ${res.status}` });
          log?.info({ issuer: cfg.issuer, jwksUri }, 'JWKS fetched');
          jwksError = undefined;
          return new Response(res.text, { status: 200, headers: { 'content-type': 'application/json' } });
        } catch (err) {
          jwksFailedAtMs = Date.now();
          jwksError =
            err instanceof SwitchyardError ? err : new SwitchyardError('SWY_ERR_AUTH_ISSUER_UNAVAILABLE', { detail: 'JWKS fetch failed', cause: err });
          log?.error({ issuer: cfg.issuer, jwksUri, err: jwksError.message }, 'JWKS unavailable');
          throw jwksError;
        }
      },
    });
  }

  // Keyed by the token's SHA-256; the audience is kept so that a cached result is checked against each mount anew.
  const introspectionCache = cfg.introspection
    ? new LRUCache<string, { identity: Identity; aud: unknown; reuseUntilMs: number }>({ max: cfg.introspection.cacheMaxEntries })
    : undefined;
  // Tokens the server called inactive, by the same SHA-256, as long as INACTIVE_TOKEN_TTL_MS
  // (bounded like the positive cache): a caller repeating a bad token does not drive the server.
  const inactiveUntilMs =
    cfg.introspection && cfg.introspection.cacheMaxMs > 0 ? new LRUCache<string, number>({ max: cfg.introspection.cacheMaxEntries }) : undefined;
  const inactiveTtlMs = Math.min(INACTIVE_TOKEN_TTL_MS, cfg.introspection?.cacheMaxMs ?? 0);

  function audiences(resource: ResourceRef): string[] {
    return configuredAudience ?? [canonicalResource(resource.uri)];
  }

  function invalid(resource: ResourceRef, reason: string, cause?: unknown): SwitchyardError {
    return challengeError('SWY_ERR_AUTH_INVALID_TOKEN', resource, { detail: reason, cause });
  }

  function checkAudience(aud: unknown, resource: ResourceRef): void {
    const got = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
    const want = audiences(resource);
    // RFC 8707 §2 / RFC 9068 §4: the token must be meant for this resource, not an upstream or a sibling mount.
    if (!got.some((a) => want.includes(canonicalResource(a)))) throw invalid(resource, 'audience mismatch');
  }

  function scopesOf(claims: Record<string, unknown>): string[] {
    // `scope` (RFC 9068 §2.2.3, RFC 7662 §2.2); `scp` as Entra ID (string) and Okta (array) write it.
    const raw = claims.scope ?? claims.scp;
    if (typeof raw === 'string') return raw.split(' ').filter((s) => s !== '');
    if (Array.isArray(raw)) return raw.filter((s): s is string => typeof s === 'string' && s !== '');
    return [];
  }

  function picked(claims: Record<string, unknown>): Readonly<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const name of cfg.claims) if (claims[name] !== undefined) out[name] = structuredClone(claims[name]);
    return Object.freeze(out);
  }

  function checkScopes(id: Identity, resource: ResourceRef): Identity {
    // `id.scopes` was closed under `scopeImplies` when the token was verified.
    const refusal = insufficientScope(cfg.scopes, id, resource);
    if (refusal) throw refusal;
    return id;
  }

  // Only tokens that passed every check are remembered, so a flood of bad tokens cannot fill it.
  const verified = new LRUCache<string, { id: Identity; untilMs: number }>({ max: VERIFIED_JWT_CACHE_ENTRIES });

  /** The identity of a JWT verified for `resource` less than a minute ago and not expired since. */
  function rememberedJwt(token: string, resource: ResourceRef): Identity | undefined {
    const hit = verified.get(`${tokenHash(token)} ${resource.uri}`);
    return hit && Date.now() < hit.untilMs ? hit.id : undefined;
  }

  async function verifyJwt(token: string, resource: ResourceRef): Promise<Identity> {
    const id = await verifyJwtOnce(token, resource);
    verified.set(`${tokenHash(token)} ${resource.uri}`, {
      id,
      untilMs: Math.min(id.expiresAtMs! + cfg.clockToleranceSec * 1000, Date.now() + VERIFIED_JWT_TTL_MS),
    });
    return id;
  }

  async function verifyJwtOnce(token: string, resource: ResourceRef): Promise<Identity> {
    let alg: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch (err) {
      throw invalid(resource, 'malformed JWT', err);
    }
    // RFC 8725 §3.1: checked before any key is looked up, so `none` and HS* never reach the key set.
    if (typeof alg !== 'string' || !algorithms.includes(alg as (typeof algorithms)[number])) throw invalid(resource, 'signing algorithm not accepted');
    const keys = await keySet();
    const verify = () =>
      jwtVerify(token, keys, { issuer: cfg.issuer, algorithms, clockTolerance: cfg.clockToleranceSec, requiredClaims: ['exp', 'sub', 'aud'] });
    let payload: JWTPayload;
    try {
      try {
        ({ payload } = await verify());
      } catch (err) {
        // A key replaced under the same `kid` (an issuer that rotates without new kids) fails the
        // signature with the cached set: fetch the set again, at most once per cooldown, and try
        // once more. jose refetches by itself only for a `kid` it does not know.
        if (!(err instanceof jose.JWSSignatureVerificationFailed) || keys.coolingDown) throw err;
        await keys.reload();
        ({ payload } = await verify());
      }
    } catch (err) {
      throw mapJoseError(err, resource);
    }
    checkAudience(payload.aud, resource);
    if (typeof payload.sub !== 'string' || payload.sub === '') throw invalid(resource, 'no subject');
    // RFC 9449 §7.1 / RFC 8705 §3: a sender-constrained token needs a proof this gateway does not check.
    if (payload.cnf !== undefined) throw invalid(resource, 'sender-constrained tokens are not accepted');
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : typeof payload.azp === 'string' ? payload.azp : undefined;
    return Object.freeze({
      issuer: cfg.issuer,
      subject: payload.sub,
      ...(clientId !== undefined ? { clientId } : {}),
      scopes: Object.freeze(hierarchy.close(scopesOf(payload))),
      claims: picked(payload),
      source: 'jwt' as const,
      expiresAtMs: (payload.exp as number) * 1000,
    });
  }

  function mapJoseError(err: unknown, resource: ResourceRef): SwitchyardError {
    if (err instanceof SwitchyardError) return err.code === 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE' ? unavailable(err, jwksFailedAtMs) : err;
    if (err instanceof jose.JWTExpired) return invalid(resource, 'expired', err);
    if (err instanceof jose.JWTClaimValidationFailed) {
      // jose's `reason`: 'check_failed' for a well-formed nbf in the future; 'invalid' for an
      // nbf/exp/iat that is no number (RFC 7519 §4.1.4/§4.1.5/§4.1.6: a NumericDate), which
      // is a malformed claim, not a token early for its time.
      const what =
        err.claim === 'iss'
          ? 'issuer mismatch'
          : err.claim === 'nbf' && err.reason === 'check_failed'
            ? 'not yet valid'
            : err.reason === 'missing'
              ? `no ${err.claim} claim`
              : `${err.claim} claim invalid`;
      return invalid(resource, what, err);
    }
    if (err instanceof jose.JWKSNoMatchingKey) return invalid(resource, 'unknown signing key', err);
    if (err instanceof jose.JWSSignatureVerificationFailed) return invalid(resource, 'bad signature', err);
    if (err instanceof jose.JWKSInvalid || err instanceof jose.JWKSTimeout) {
      jwksFailedAtMs = Date.now();
      jwksError = new SwitchyardError('SWY_ERR_AUTH_ISSUER_UNAVAILABLE', { detail: 'JWKS unusable', cause: err });
      return unavailable(jwksError, jwksFailedAtMs);
    }
    if (err instanceof jose.JOSEError) return invalid(resource, 'malformed JWT', err);
    return new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'token verification failed', cause: err });
  }

  // Introspection POSTs in flight, by the token's SHA-256: a request with a token already being
  // asked about waits for that answer instead of making its own POST. An entry lives exactly as
  // long as its POST (removed when it settles, answer or failure, so a failure is not reused), so
  // there are never more than `maxConcurrent` of them.
  const asking = new Map<string, Promise<Record<string, unknown>>>();
  // Background checks waiting for a place (FIFO, at most MAX_INTROSPECTION_WAITERS), and the places
  // handed to woken waiters that have not taken them yet: a freed place goes to a waiter first, so
  // that requests arriving meanwhile cannot keep them waiting for ever.
  const waiters: Array<() => void> = [];
  let handedOff = 0;
  /** Hands free places to waiters, in their order. */
  const wakeWaiters = () => {
    while (waiters.length > 0 && asking.size + handedOff < cfg.introspection!.maxConcurrent) {
      handedOff++;
      waiters.shift()!();
    }
  };

  /**
   * The authorization server's answer about `token` (a JSON object; what it says is judged by
   * each caller for its own resource), from the POST already in flight for `key` or a new one.
   * A new POST needs one of `maxConcurrent` places; a request has no queue, a background check
   * (`wait`) waits for a place in one.
   * @throws SwitchyardError SWY_ERR_AUTH_INTROSPECTION_BUSY (503, `Retry-After: 1`) when every
   *   place is taken (and, with `wait`, {@link MAX_INTROSPECTION_WAITERS} wait already);
   *   SWY_ERR_AUTH_ISSUER_UNAVAILABLE when the POST fails, times out or is not answered 200 with
   *   a JSON object (every caller waiting on that POST gets it).
   * @see RFC 7662 §2.1 (the introspection request); docs/security.md
   */
  function sharedAnswer(token: string, key: string, wait = false): Promise<Record<string, unknown>> {
    const pending = asking.get(key);
    if (pending) return pending;
    const ic = cfg.introspection!;
    if (asking.size + handedOff >= ic.maxConcurrent) {
      if (!wait || waiters.length >= MAX_INTROSPECTION_WAITERS) return Promise.reject(new SwitchyardError('SWY_ERR_AUTH_INTROSPECTION_BUSY'));
      return new Promise<void>((resolve) => waiters.push(resolve)).then(() => {
        handedOff--;
        // The place handed over: taken by this POST, or (the token asked about meanwhile) passed on.
        const answer = sharedAnswer(token, key, wait);
        wakeWaiters();
        return answer;
      });
    }
    const answer = askServer(token).finally(() => {
      asking.delete(key);
      wakeWaiters();
    });
    asking.set(key, answer);
    return answer;
  }

  /** One introspection POST (RFC 7662 §2.1), authenticated with HTTP Basic; the JSON object answered. */
  async function askServer(token: string): Promise<Record<string, unknown>> {
    const ic = cfg.introspection!;
    const endpoint = ic.endpoint ?? (await metadata.get()).introspection_endpoint;
    if (typeof endpoint !== 'string')
      throw new SwitchyardError('SWY_ERR_AUTH_ISSUER_UNAVAILABLE', { detail: 'the issuer metadata has no introspection_endpoint' });
    const res = await fetchBounded(endpoint, {
      method: 'POST',
      form: new URLSearchParams({ token, token_type_hint: 'access_token' }),
      headers: { authorization: basicAuth(ic.clientId, ic.clientSecret) },
      timeoutMs: cfg.timeoutMs,
      code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
      what: 'introspection',
    });
    const body = res.status === 200 ? jsonObject(res.text) : null;
    if (!body) {
      log?.error({ issuer: cfg.issuer, status: res.status }, 'introspection failed');
      throw new SwitchyardError('SWY_ERR_AUTH_ISSUER_UNAVAILABLE', {
        detail: `introspection answered ${res.status}${res.status === 200 ? ' without a JSON object' : ''}`,
      });
    }
    return body;
  }

  async function introspect(token: string, resource: ResourceRef, wait: boolean): Promise<Identity> {
    const ic = cfg.introspection!;
    const key = tokenHash(token);
    const hit = introspectionCache!.get(key);
    if (hit && hit.reuseUntilMs > Date.now()) {
      checkAudience(hit.aud, resource);
      return hit.identity;
    }
    if (hit) introspectionCache!.delete(key);
    const inactiveUntil = inactiveUntilMs?.get(key);
    if (inactiveUntil !== undefined) {
      if (inactiveUntil > Date.now()) throw invalid(resource, 'inactive');
      inactiveUntilMs!.delete(key);
    }
    const body = await sharedAnswer(token, key, wait);
    // RFC 7662 §2.2: `active` is the one REQUIRED member; anything but true is an invalid token.
    if (body.active !== true) {
      inactiveUntilMs?.set(key, Date.now() + inactiveTtlMs);
      throw invalid(resource, 'inactive');
    }
    if (body.iss !== undefined && body.iss !== cfg.issuer) throw invalid(resource, 'issuer mismatch');
    checkAudience(body.aud, resource);
    // RFC 7662 §2.2: iat, nbf and exp are timestamps in seconds, numbers on the wire; one of another
    // type is a malformed answer, refused as a JWT's is (jose, RFC 7519 §4.1.4-§4.1.6), not skipped,
    // so a string nbf cannot pass as no start time nor a string exp as no expiry.
    for (const claim of ['iat', 'nbf', 'exp'] as const)
      if (body[claim] !== undefined && typeof body[claim] !== 'number') throw invalid(resource, `${claim} claim invalid`);
    const nowSec = Date.now() / 1000;
    if (typeof body.exp === 'number' && body.exp + cfg.clockToleranceSec <= nowSec) throw invalid(resource, 'expired');
    if (typeof body.nbf === 'number' && body.nbf - cfg.clockToleranceSec > nowSec) throw invalid(resource, 'not yet valid');
    if (body.cnf !== undefined) throw invalid(resource, 'sender-constrained tokens are not accepted');
    // RFC 7662 §2.2 token_type: when the server names the type, it must be a bearer access token
    // (RFC 6750; the scheme is case-insensitive, RFC 9110 §11.1); `N_A` (RFC 8693 §2.2.1), a
    // refresh token or a DPoP token is not one. Without it, the answer is taken as one.
    if (body.token_type !== undefined && (typeof body.token_type !== 'string' || body.token_type.toLowerCase() !== 'bearer'))
      throw invalid(resource, 'not a bearer access token');
    const subject =
      typeof body.sub === 'string' && body.sub !== '' ? body.sub : typeof body.client_id === 'string' && body.client_id !== '' ? body.client_id : undefined;
    if (subject === undefined) throw invalid(resource, 'no subject');
    const id: Identity = Object.freeze({
      issuer: cfg.issuer,
      subject,
      ...(typeof body.client_id === 'string' ? { clientId: body.client_id } : {}),
      scopes: Object.freeze(hierarchy.close(scopesOf(body))),
      claims: picked(body),
      source: 'introspection' as const,
      ...(typeof body.exp === 'number' ? { expiresAtMs: body.exp * 1000 } : {}),
    });
    // Reused until `exp`, and at most `cacheMaxMs`: a revoked token stops working within that
    // time (RFC 7662 §4). Without `exp`, the token is introspected on every request.
    if (id.expiresAtMs !== undefined && ic.cacheMaxMs > 0)
      introspectionCache!.set(key, { identity: id, aud: body.aud, reuseUntilMs: Math.min(id.expiresAtMs, Date.now() + ic.cacheMaxMs) });
    return id;
  }

  return {
    requiredScopes: cfg.scopes,
    async verify(token, resourceIn, opts) {
      const resource: ResourceRef = typeof resourceIn === 'string' ? { uri: resourceIn, prmUrl: prmUrl(resourceIn) } : resourceIn;
      let id: Identity;
      try {
        const known = rememberedJwt(token, resource);
        if (known) id = known;
        else if (JWS_COMPACT.test(token)) id = await verifyJwt(token, resource);
        else if (cfg.introspection) id = await introspect(token, resource, opts?.waitForPlace === true);
        else throw invalid(resource, 'not a JWT and introspection is off');
      } catch (err) {
        // Every 503 says when to come back, also those that are not backed off (introspection, unusable metadata).
        if (err instanceof SwitchyardError && err.code === 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE' && err.headers?.['Retry-After'] === undefined)
          throw new SwitchyardError(err.code, { message: err.message, cause: err.cause, headers: { 'Retry-After': String(DISCOVERY_RETRY_SEC) } });
        throw err;
      }
      return checkScopes(id, resource);
    },
  };
}
