// Authorization server metadata discovery (RFC 8414, then OpenID Connect Discovery), fetched once per issuer and cached.

import { operatorText, SwitchyardError, type ErrorCode } from '../core/errors.js';
import type { Logger } from '../log/logger.js';
import { fetchBounded, jsonObject } from './fetch.js';

/** The metadata members Switchyard reads (RFC 8414 §2; other members are kept as given). */
export interface AuthorizationServerMetadata {
  readonly issuer: string;
  readonly jwks_uri?: string;
  readonly token_endpoint?: string;
  readonly introspection_endpoint?: string;
  readonly [member: string]: unknown;
}

/** How long a failed discovery is remembered before it is tried again, seconds (sent as `Retry-After`). */
export const DISCOVERY_RETRY_SEC = 10;

/**
 * The metadata URLs tried for `issuer`, in order: RFC 8414 §3.1 (well-known suffix inserted
 * between the host and the issuer's path), then OpenID Connect Discovery with the suffix
 * inserted the same way, then OpenID Connect Discovery 1.0 §4 (suffix appended to the issuer).
 * Duplicates are dropped (an issuer without a path has two).
 * @see RFC 8414 §3.1, §5; OpenID Connect Discovery 1.0 §4; 2025-11-25 basic/authorization
 *   (authorization server metadata discovery order)
 */
export function metadataUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const path = u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '');
  const urls = [
    `${u.origin}/.well-known/oauth-authorization-server${path}`,
    `${u.origin}/.well-known/openid-configuration${path}`,
    `${u.origin}${path}/.well-known/openid-configuration`,
  ];
  return [...new Set(urls)];
}

/** A cached metadata lookup for one issuer. */
export interface MetadataSource {
  /**
   * The issuer's metadata: fetched on first use and kept; a failure is remembered for
   * {@link DISCOVERY_RETRY_SEC} seconds, during which calls fail at once.
   * @throws SwitchyardError `code` (with `Retry-After`) when discovery fails.
   */
  get(): Promise<AuthorizationServerMetadata>;
}

/** Inputs of {@link createMetadataSource}. */
export interface MetadataSourceOptions {
  /** The issuer identifier, compared exactly with the document's `issuer` (RFC 8414 §3.3). */
  issuer: string;
  /** Timeout of each metadata request, ms. */
  timeoutMs: number;
  /** Thrown on failure: SWY_ERR_AUTH_ISSUER_UNAVAILABLE inbound, SWY_ERR_AUTH_UPSTREAM_TOKEN outbound. */
  code: ErrorCode;
  log?: Logger;
}

/**
 * Creates the metadata lookup for one issuer. A URL answering 404 (or another 4xx) moves on to
 * the next candidate; a network error, timeout or 5xx ends discovery at once, so a down issuer
 * costs one timeout, not three.
 * @see RFC 8414 §3, §3.3 (the `issuer` member MUST equal the issuer used to build the URL)
 */
export function createMetadataSource(opts: MetadataSourceOptions): MetadataSource {
  let cached: Promise<AuthorizationServerMetadata> | undefined;
  let failedAtMs = 0;
  let lastError: SwitchyardError | undefined;

  const retryAfter = (err: SwitchyardError) => {
    const leftSec = Math.max(1, Math.ceil((failedAtMs + DISCOVERY_RETRY_SEC * 1000 - Date.now()) / 1000));
    return new SwitchyardError(err.code, {
      message: err.message,
      operatorMessage: err.operatorMessage,
      data: err.data,
      cause: err.cause,
      headers: { 'Retry-After': String(leftSec) },
    });
  };
  /**
   * A discovery failure: `why` after `metadata` for whoever reads the error (a client, when the
   * issuer is an upstream's), and after `metadata URL` for the operator only (`operatorDetail`:
   * the log, `lastError`): an upstream's token issuer is the operator's topology.
   */
  const failed = (url: string, why: string, operatorWhy = why) =>
    new SwitchyardError(opts.code, { detail: `metadata ${why}`, operatorDetail: `metadata ${url} ${operatorWhy}` });

  async function discover(): Promise<AuthorizationServerMetadata> {
    const tried: string[] = [];
    for (const url of metadataUrls(opts.issuer)) {
      const res = await fetchBounded(url, { timeoutMs: opts.timeoutMs, code: opts.code, what: 'metadata', at: url });
      tried.push(`${url} ${res.status}`);
      if (res.status >= 400 && res.status < 500) continue;
      if (res.status !== 200) throw failed(url, `answered ${res.status}`);
      const doc = jsonObject(res.text);
      if (!doc) throw failed(url, 'is not a JSON object');
      // RFC 8414 §3.3: a document naming another issuer MUST NOT be used.
      if (doc.issuer !== opts.issuer)
        throw failed(url, 'names another issuer than the configured one', `names issuer ${JSON.stringify(doc.issuer)}, not the configured one`);
      for (const k of ['jwks_uri', 'token_endpoint', 'introspection_endpoint'] as const) {
        if (doc[k] !== undefined && !isHttpUrl(doc[k])) throw failed(url, `has a ${k} that is not an http(s) URL`);
      }
      opts.log?.info({ issuer: opts.issuer, url }, 'authorization server metadata loaded');
      return doc as AuthorizationServerMetadata;
    }
    throw new SwitchyardError(opts.code, {
      detail: `metadata not found (${tried.length} URLs tried)`,
      operatorDetail: `metadata not found (${tried.join(', ')})`,
    });
  }

  return {
    get() {
      if (cached) return cached;
      if (lastError && Date.now() < failedAtMs + DISCOVERY_RETRY_SEC * 1000) return Promise.reject(retryAfter(lastError));
      const p = discover().catch((err: unknown) => {
        cached = undefined;
        failedAtMs = Date.now();
        lastError = err instanceof SwitchyardError ? err : new SwitchyardError(opts.code, { detail: 'metadata discovery failed', cause: err });
        opts.log?.error({ issuer: opts.issuer, err: operatorText(lastError) }, 'authorization server metadata unavailable');
        throw retryAfter(lastError);
      });
      cached = p;
      return p;
    },
  };
}

/** True for an absolute http: or https: URL. */
export function isHttpUrl(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}
