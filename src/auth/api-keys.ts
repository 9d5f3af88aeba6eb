// Static API keys: stored as SHA-256, presented as `Authorization: Bearer <key>`, compared in constant time.

import { createHash, timingSafeEqual } from 'node:crypto';
import { SwitchyardError } from '../core/errors.js';
import type { Identity } from '../core/identity.js';
import type { ApiKeyConfig } from './config.js';
import { NO_SCOPE_HIERARCHY, type ScopeHierarchy } from './scopes.js';

/** The issuer of every API-key identity. */
export const API_KEY_ISSUER = 'switchyard:api-key';

/** The configured keys, ready to match presented ones. */
export interface ApiKeyStore {
  /**
   * The identity of the key `presented` (issuer `switchyard:api-key`, subject = its name,
   * its scopes closed under the store's scope hierarchy), or null when no key matches. Every configured key is compared, each in
   * constant time, so the time taken does not say which key came close.
   */
  lookup(presented: string): Identity | null;
  /** How many keys are configured. */
  readonly size: number;
}

/** SHA-256 of `key`'s UTF-8 bytes as 64 lower-case hex digits: what `auth.apiKeys[].sha256` holds. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * Builds the key store. Names and hashes must be unique.
 * @param keys `{ name, sha256 (hex, any case), scopes? }` entries.
 * @param hierarchy the `auth.bearer.scopeImplies` of the same `auth`, compiled: each key's
 *   scopes are closed under it here, once (default: none, scopes as written).
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID for a malformed hash or a duplicate name or hash.
 * @see RFC 6750 §2.1 (the key travels as a bearer token); docs/security.md, API keys
 */
export function createApiKeyStore(keys: readonly ApiKeyConfig[], hierarchy: ScopeHierarchy = NO_SCOPE_HIERARCHY): ApiKeyStore {
  const entries: Array<{ digest: Buffer; identity: Identity }> = [];
  const names = new Set<string>();
  const hashes = new Set<string>();
  keys.forEach((k, i) => {
    const hex = k.sha256.toLowerCase();
    const bad = (message: string) =>
      new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `auth/apiKeys/${i}: ${message}`, data: { errors: [{ path: `auth/apiKeys/${i}`, message }] } });
    if (!/^[0-9a-f]{64}$/.test(hex)) throw bad('sha256 must be 64 hex digits');
    if (names.has(k.name)) throw bad(`duplicate name ${k.name}`);
    if (hashes.has(hex)) throw bad('duplicate sha256');
    names.add(k.name);
    hashes.add(hex);
    entries.push({
      digest: Buffer.from(hex, 'hex'),
      identity: Object.freeze({
        issuer: API_KEY_ISSUER,
        subject: k.name,
        scopes: Object.freeze([...hierarchy.close(k.scopes ?? [])]),
        claims: Object.freeze({}),
        source: 'api-key' as const,
      }),
    });
  });
  return {
    size: entries.length,
    lookup(presented) {
      const digest = createHash('sha256').update(presented, 'utf8').digest();
      let found: Identity | null = null;
      // No early exit: every entry is compared whether or not one matched already.
      for (const e of entries) if (timingSafeEqual(e.digest, digest) && found === null) found = e.identity;
      return found;
    },
  };
}
