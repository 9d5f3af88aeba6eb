// The front door's authentication step: one request's headers in, a verified Identity (or null when auth is off) or a challenge error out.

import { SwitchyardError } from '../core/errors.js';
import type { Identity } from '../core/identity.js';
import { loggedSubject } from '../core/logged-text.js';
import type { Logger } from '../log/logger.js';
import { createIntervalLine } from '../core/interval-line.js';
import { createApiKeyStore, type ApiKeyStore } from './api-keys.js';
import { createBearerVerifier, looksLikeJwt, tokenHash, type BearerVerifier, type ResourceRef, type VerifyOptions } from './bearer.js';
import { challengeError, parseAuthorization, withChallenge } from './challenge.js';
import { resolveAuthConfig, type AuthConfig } from './config.js';
import { compileScopeHierarchy, insufficientScope, NO_SCOPE_HIERARCHY } from './scopes.js';

export type { ResourceRef, VerifyOptions } from './bearer.js';

/** Request headers, looked up by lower-case name; a repeated field joined with `, ` (as Fetch `Headers.get` does). */
export interface HeaderSource {
  get(name: string): string | null | undefined;
}

/** Authenticates requests for any number of mounts. */
export interface Authenticator {
  /**
   * Authenticates one request. Order: the `Authorization` header is parsed (RFC 6750 §2.1);
   * no Bearer credential → 401; the token is matched against the API keys (constant time),
   * then verified as an access token when `bearer` is configured; finally the required scopes
   * (`bearer.scopes`) are checked, for API keys too, against the granted scopes closed under
   * `bearer.scopeImplies` (the closure computed when the authenticator is created).
   * @param headers the request's headers.
   * @param resource the mount: its canonical URI (default audience) and metadata URL (named in challenges).
   * @param opts `waitForPlace`: a background check waits for an introspection place (`BearerVerifier.verify`).
   * @returns the verified Identity, or null only when the config says `none: true`.
   * @throws SwitchyardError with `WWW-Authenticate` naming `resource_metadata`:
   *   SWY_ERR_AUTH_REQUIRED (401), SWY_ERR_AUTH_INVALID_REQUEST / SWY_ERR_AUTH_TOKEN_TOO_LONG (400),
   *   SWY_ERR_AUTH_INVALID_TOKEN (401), SWY_ERR_AUTH_INSUFFICIENT_SCOPE (403); and
   *   SWY_ERR_AUTH_ISSUER_UNAVAILABLE or SWY_ERR_AUTH_INTROSPECTION_BUSY (503, `Retry-After`).
   * @see RFC 6750 §3; RFC 9728 §5.1; 2025-11-25 basic/authorization (access token usage)
   */
  authenticate(headers: HeaderSource, resource: ResourceRef, opts?: VerifyOptions): Promise<Identity | null>;
}

/**
 * At most one `authentication failed` line for SWY_ERR_AUTH_INTROSPECTION_BUSY in this many ms,
 * per `auth` value; it counts the refusals since the last one (`refused`), as the admin listener's
 * refused connections are counted.
 */
export const INTROSPECTION_BUSY_LOG_INTERVAL_MS = 60_000;

/** Collaborators of {@link createAuthenticator}. */
export interface AuthenticatorDeps {
  /** Refusals at info (client faults), issuer failures at error; a token appears only as its SHA-256. */
  log: Logger;
}

/**
 * Creates the authenticator for the `auth` config key.
 * @param config `{ bearer?, apiKeys?, none?, stdio? }`, validated here against `src/auth/schema.json`
 *   (defaults applied; the input is not changed).
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when the config fails the schema or has duplicate API keys.
 * @see docs/security.md (what is checked where, and in which order)
 */
export function createAuthenticator(config: AuthConfig, deps: AuthenticatorDeps): Authenticator {
  const cfg = resolveAuthConfig(config);
  const log = deps.log.child({ component: 'auth' });
  if (cfg.none) return { authenticate: async () => null };
  // Compiled once, here, for both: an API key's scopes are judged as a token's, under the same hierarchy.
  const hierarchy = cfg.bearer ? compileScopeHierarchy(cfg.bearer.scopeImplies) : NO_SCOPE_HIERARCHY;
  const keys: ApiKeyStore | undefined = cfg.apiKeys ? createApiKeyStore(cfg.apiKeys, hierarchy) : undefined;
  const verifier: BearerVerifier | undefined = cfg.bearer
    ? createBearerVerifier(cfg.bearer, { log, scopeHierarchy: hierarchy, resolved: cfg.bearer })
    : undefined;
  const required = cfg.bearer?.scopes ?? [];

  // The gateway's own bound refuses a flood as fast as it comes: one line a minute, with a count.
  const busyLine = createIntervalLine(INTROSPECTION_BUSY_LOG_INTERVAL_MS);

  function refused(err: unknown, resource: ResourceRef, token: string | null): never {
    if (err instanceof SwitchyardError) {
      const fields = { code: err.code, status: err.status, resource: resource.uri, ...(token !== null ? { tokenSha256: tokenHash(token) } : {}) };
      if (err.code === 'SWY_ERR_AUTH_INTROSPECTION_BUSY') {
        // The token and mount of the refusal that writes the line; `refused` counts it and those held back.
        const n = busyLine.hit();
        if (n !== undefined) log.error({ ...fields, reason: err.message, refused: n }, 'authentication failed');
      } else if (err.entry.fault === 'client') log.info({ ...fields, reason: err.message }, 'authentication refused');
      else log.error({ ...fields, reason: err.message }, 'authentication failed');
    } else log.error({ resource: resource.uri, err }, 'authentication failed');
    throw err;
  }

  return {
    async authenticate(headers, resource, opts) {
      let token: string | null;
      try {
        token = parseAuthorization(headers.get('authorization'));
      } catch (err) {
        return refused(withChallenge(err, resource), resource, null);
      }
      if (token === null) return refused(challengeError('SWY_ERR_AUTH_REQUIRED', resource, { scope: required }), resource, null);
      try {
        let id = keys?.lookup(token) ?? null;
        if (id !== null) {
          // The key's scopes were closed under `scopeImplies` when the store was built.
          const refusal = insufficientScope(required, id, resource);
          if (refusal) throw refusal;
        } else if (verifier && (looksLikeJwt(token) || cfg.bearer?.introspection)) id = await verifier.verify(token, resource, opts);
        else throw challengeError('SWY_ERR_AUTH_INVALID_TOKEN', resource, { detail: keys ? 'unknown API key' : 'not a JWT and introspection is off' });
        // The subject is the authorization server's to choose, of any length: cut as the audit line cuts it (the issuer too, as there).
        log.debug({ issuer: loggedSubject(id.issuer), subject: loggedSubject(id.subject), source: id.source, resource: resource.uri }, 'authenticated');
        return id;
      } catch (err) {
        return refused(err, resource, token);
      }
    },
  };
}
