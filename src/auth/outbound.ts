// Outbound credentials per upstream: static headers, OAuth client credentials, or RFC 8693 token exchange; never the client's own token.

import { LRUCache } from 'lru-cache';
import { SwitchyardError } from '../core/errors.js';
import type { Logger } from '../log/logger.js';
import { tokenHash } from './bearer.js';
import { resolveOutboundConfig, type ClientCredentialsConfig, type OutboundConfig, type TokenExchangeConfig } from './config.js';
import { createMetadataSource, type MetadataSource } from './discovery.js';
import { basicAuth, fetchBounded, jsonObject } from './fetch.js';
import { textOf } from '../core/message.js';
import { urlForDisplay } from '../core/url-text.js';

/**
 * A cached token is replaced this long before it expires, ms; a token issued for less than twice
 * this is replaced halfway through its lifetime instead (see {@link refreshAtMs}).
 */
export const REFRESH_MARGIN_MS = 30_000;

/** Lifetime assumed for a token whose response has no `expires_in` (RFC 6749 §5.1 makes it RECOMMENDED only), seconds. */
export const DEFAULT_TOKEN_LIFETIME_SEC = 300;

/** The token exchange grant type (RFC 8693 §2.1). */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** The access token type identifier (RFC 8693 §3): the subject token's type, and the type requested. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

/** What the request brought in: the client's verified OAuth access token, for token exchange. */
export interface InboundCredential {
  /**
   * The client's access token, only when the request was authenticated with one (Identity
   * `source` `jwt` or `introspection`); never an API key.
   */
  token?: string;
}

/** Produces the headers one upstream needs. */
export interface TokenSource {
  /**
   * Headers to add to a request to the upstream (`Authorization: Bearer …`, or the static
   * ones). The client's own `Authorization` must not be sent as well.
   * @throws SwitchyardError SWY_ERR_AUTH_UPSTREAM_TOKEN (502) when no token can be obtained,
   *   SWY_ERR_AUTH_NO_SUBJECT_TOKEN (403) for token exchange without an inbound token.
   */
  headers(inbound: InboundCredential): Promise<Record<string, string>>;
  /**
   * Drops the cached token after the upstream answered 401, so the next `headers` call fetches
   * a new one (once: concurrent callers share that fetch). For token exchange, `inbound` names
   * the one entry to drop; without it every cached entry goes. No effect for static headers.
   */
  invalidate(inbound?: InboundCredential): void;
}

/** Optional collaborators of {@link createTokenSource}. */
export interface TokenSourceDeps {
  /** Logs token fetches and failures (never a token or secret). */
  log?: Logger;
}

interface CachedToken {
  token: string;
  expiresAtMs: number;
  /** From when a new token is fetched instead, ms since the epoch (before `expiresAtMs`). */
  refreshAtMs: number;
}

/**
 * When a token obtained at `obtainedAtMs` for `lifetimeMs` is replaced: {@link REFRESH_MARGIN_MS}
 * before it expires, or halfway through a lifetime shorter than twice that margin. A fixed margin
 * alone would never reuse a token issued for 30 s or less (short-lived tokens are what an
 * authorization server should issue), fetching one for every upstream request.
 * @see RFC 6749 §5.1 (`expires_in`, seconds)
 */
export function refreshAtMs(obtainedAtMs: number, lifetimeMs: number): number {
  return obtainedAtMs + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2);
}

/**
 * Creates an upstream's token source from its credentials config (validated here against
 * `src/auth/outbound-schema.json`, defaults applied).
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when the config fails the schema.
 * @see 2025-11-25 basic/authorization, Token Passthrough (forbidden); RFC 6749 §4.4; RFC 8693 §2;
 *   RFC 8707 (`resource`)
 */
export function createTokenSource(config: OutboundConfig, deps: TokenSourceDeps = {}): TokenSource {
  const cfg = resolveOutboundConfig(config);
  if ('headers' in cfg) {
    const fixed = cfg.headers;
    return { headers: async () => ({ ...fixed }), invalidate: () => undefined };
  }
  if ('clientCredentials' in cfg) return clientCredentialsSource(cfg.clientCredentials as Required<ClientCredentialsConfig>, deps.log);
  return tokenExchangeSource(cfg.tokenExchange as Required<TokenExchangeConfig>, deps.log);
}

function fresh(t: CachedToken | undefined): t is CachedToken {
  return t !== undefined && Date.now() < t.refreshAtMs;
}

/** One POST to a token endpoint (RFC 6749 §3.2), its answer checked. */
function tokenEndpoint(ep: Required<ClientCredentialsConfig> | Required<TokenExchangeConfig>, log: Logger | undefined, what: string) {
  const metadata: MetadataSource | undefined = ep.tokenUrl
    ? undefined
    : createMetadataSource({ issuer: ep.issuer, timeoutMs: ep.timeoutMs, code: 'SWY_ERR_AUTH_UPSTREAM_TOKEN', log });
  return async (form: URLSearchParams, acceptedTypes?: readonly string[]): Promise<CachedToken> => {
    const url = ep.tokenUrl ?? (await metadata!.get()).token_endpoint;
    if (typeof url !== 'string') throw new SwitchyardError('SWY_ERR_AUTH_UPSTREAM_TOKEN', { detail: 'the issuer metadata has no token_endpoint' });
    const headers: Record<string, string> = {};
    // RFC 6749 §2.3.1: Basic is the method every server must support; the body form is the fallback.
    if (ep.authMethod === 'client_secret_post') {
      form.set('client_id', ep.clientId);
      form.set('client_secret', ep.clientSecret);
    } else headers.authorization = basicAuth(ep.clientId, ep.clientSecret);
    const res = await fetchBounded(url, { method: 'POST', form, headers, timeoutMs: ep.timeoutMs, code: 'SWY_ERR_AUTH_UPSTREAM_TOKEN', what });
    const body = jsonObject(res.text);
    if (res.status !== 200) {
      // RFC 6749 §5.2: `error` is an ASCII code; anything else is not repeated.
      const error = typeof body?.error === 'string' && /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$/.test(body.error) ? body.error : undefined;
      log?.error({ url: urlForDisplay(url), status: res.status, error }, 'upstream token request refused');
      throw new SwitchyardError('SWY_ERR_AUTH_UPSTREAM_TOKEN', {
        detail: `${what} answered ${res.status}${error ? ` ${error}` : ''}`,
        ...(error ? { data: { error } } : {}),
      });
    }
    const token = body?.access_token;
    if (typeof token !== 'string' || token === '')
      throw new SwitchyardError('SWY_ERR_AUTH_UPSTREAM_TOKEN', { detail: `${what} answered without an access_token` });
    // RFC 6750 §1: only a Bearer token can be sent as one (`N_A` or `DPoP` cannot).
    if (body!.token_type !== undefined && textOf(body!.token_type).toLowerCase() !== 'bearer')
      throw new SwitchyardError('SWY_ERR_AUTH_UPSTREAM_TOKEN', { detail: `${what} issued a token that is not a Bearer token` });
    if (acceptedTypes && body!.issued_token_type !== undefined && !acceptedTypes.includes(textOf(body!.issued_token_type)))
      throw new SwitchyardError('SWY_ERR_AUTH_UPSTREAM_TOKEN', { detail: `${what} issued a token that is not an access token` });
    const expiresInSec = typeof body!.expires_in === 'number' && body!.expires_in > 0 ? body!.expires_in : DEFAULT_TOKEN_LIFETIME_SEC;
    log?.info({ url: urlForDisplay(url), expiresInSec }, 'upstream token obtained');
    const now = Date.now();
    return { token, expiresAtMs: now + expiresInSec * 1000, refreshAtMs: refreshAtMs(now, expiresInSec * 1000) };
  };
}

function bearer(t: CachedToken): Record<string, string> {
  return { Authorization: `Bearer ${t.token}` };
}

function clientCredentialsSource(cc: Required<ClientCredentialsConfig>, log: Logger | undefined): TokenSource {
  const post = tokenEndpoint(cc, log, 'token endpoint (client_credentials)');
  let current: CachedToken | undefined;
  let pending: Promise<CachedToken> | undefined;
  return {
    async headers() {
      if (fresh(current)) return bearer(current);
      if (!pending) {
        const form = new URLSearchParams({ grant_type: 'client_credentials' });
        if (cc.scope) form.set('scope', cc.scope);
        // RFC 8707 §2.2: the token's audience is the upstream.
        if (cc.resource) form.set('resource', cc.resource);
        pending = post(form)
          .then((t) => (current = t))
          .finally(() => (pending = undefined));
      }
      return bearer(await pending);
    },
    invalidate() {
      current = undefined;
    },
  };
}

function tokenExchangeSource(te: Required<TokenExchangeConfig>, log: Logger | undefined): TokenSource {
  const post = tokenEndpoint(te, log, 'token endpoint (token exchange)');
  // Keyed by the SHA-256 of the client's token: one exchanged token per client token.
  const cache = new LRUCache<string, CachedToken>({ max: te.cacheMaxEntries });
  const pending = new Map<string, Promise<CachedToken>>();
  return {
    async headers(inbound) {
      if (!inbound.token) throw new SwitchyardError('SWY_ERR_AUTH_NO_SUBJECT_TOKEN');
      const key = tokenHash(inbound.token);
      const hit = cache.get(key);
      if (fresh(hit)) return bearer(hit);
      let p = pending.get(key);
      if (!p) {
        // RFC 8693 §2.1: the client's token is the subject; the result is for the upstream only.
        const form = new URLSearchParams({
          grant_type: TOKEN_EXCHANGE_GRANT,
          subject_token: inbound.token,
          subject_token_type: ACCESS_TOKEN_TYPE,
          requested_token_type: ACCESS_TOKEN_TYPE,
        });
        if (te.resource) form.set('resource', te.resource);
        if (te.audience) form.set('audience', te.audience);
        if (te.scope) form.set('scope', te.scope);
        p = post(form, [ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE]).then((t) => {
          cache.set(key, t);
          return t;
        });
        // In-flight exchanges are shared per client token; past the cache bound they are not tracked (still done, not shared).
        if (pending.size < te.cacheMaxEntries) {
          pending.set(key, p);
          const done = () => void pending.delete(key);
          p.then(done, done);
        }
      }
      return bearer(await p);
    },
    invalidate(inbound) {
      if (inbound?.token) cache.delete(tokenHash(inbound.token));
      else cache.clear();
    },
  };
}
