// Sealed state: AES-256-GCM tokens any replica can open, so session state, requestState and task
// handles travel with the client instead of living in one replica's memory.

import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { SwitchyardError } from '../core/errors.js';

/** One sealing key: an id carried in every token and 32 secret bytes. */
export interface SealKey {
  /** Key id, 1–32 characters of `[A-Za-z0-9_-]`; names the key in each token so rotation works. */
  readonly id: string;
  /** The secret, exactly 32 bytes (256 bits). Never logged. */
  readonly secret: Uint8Array;
}

/** What {@link createSealer} takes. */
export interface SealerOptions {
  /** The keys: the first seals, all of them open (older keys stay during a rotation). At least one. */
  readonly keys: readonly SealKey[];
  /** The clock, ms since the epoch (default `Date.now`); tokens at or past their expiry do not open. */
  readonly now?: () => number;
  /**
   * Called with the key id of a token that has the sealed shape (`v1.<kid>.…`, four parts) but
   * names a key this sealer does not hold: usually a replica started with another cluster key.
   * The key id is derived from the key and appears in every token, so it is no secret.
   */
  readonly onUnknownKey?: (keyId: string) => void;
}

/** Seals and opens tokens; one per process, shared by every purpose. */
export interface Sealer {
  /** The id of the key new tokens are sealed with. */
  readonly currentKeyId: string;
  /**
   * Seals `value` for one purpose until `expiresAtMs`.
   * @param purpose what the token is for, `[a-z][a-z0-9-]{0,31}` (`session`, `request-state`, `task`);
   *   a token opens only for the purpose it was sealed for.
   * @param value any JSON-serializable value (not `undefined`).
   * @param expiresAtMs expiry, ms since the epoch (an integer).
   * @returns `v1.<kid>.<iv>.<ciphertext+tag>`, base64url parts: visible ASCII only (0x21–0x7E), so it
   *   can be an `Mcp-Session-Id` value. Length: about 4/3 × (JSON length + 30) + 40 characters.
   * @throws SwitchyardError `SWY_ERR_INTERNAL_FAULT` for a bad purpose, a value JSON cannot
   *   carry, or a non-integer expiry (all programming errors).
   * @see 2025-11-25 basic/transports#session-management (session ids: visible ASCII, cryptographically secure)
   */
  seal(purpose: string, value: unknown, expiresAtMs: number): string;
  /**
   * Opens a token sealed for `purpose`.
   * @returns the sealed value, or `undefined` for anything else: malformed, too long, unknown key
   *   id, altered, expired, or sealed for another purpose. Never throws, whatever `token` is.
   */
  open(purpose: string, token: unknown): unknown;
}

/** The token format version; it is part of the authenticated data, so a v1 token never opens as another version. */
const VERSION = 'v1';
/** NIST SP 800-38D §8.2.2: a random 96-bit IV per message. */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SECRET_BYTES = 32;
/** Tokens longer than this are refused unread (an `Mcp-Session-Id` fits in 4 KiB; 64 KiB leaves room for requestState). */
export const MAX_TOKEN_CHARS = 65_536;
/** Purposes derived per key at most; purposes are code constants, so this is never reached by input. */
const MAX_PURPOSES = 64;
/** HKDF salt (RFC 5869 §3.1: a fixed, non-secret salt separates this use of the secret from any other). */
const HKDF_SALT = Buffer.from('switchyard/seal/v1');

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const PURPOSE = /^[a-z][a-z0-9-]{0,31}$/;
const B64URL = /^[A-Za-z0-9_-]+$/;

/** Decodes base64url only in its canonical form: an altered unused low bit in the last character must not decode to the same bytes. */
function decodeCanonical(text: string): Buffer | undefined {
  if (!B64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

function aad(kid: string, purpose: string): Buffer {
  return Buffer.from(`${VERSION}\0${kid}\0${purpose}`, 'utf8');
}

/**
 * Creates a sealer. Each key's per-purpose AES-256-GCM key is derived once with HKDF-SHA-256
 * (info = purpose) and kept; no key is derived per message.
 * @throws SwitchyardError `SWY_ERR_CONFIG_INVALID` when there is no key, a key id is malformed or
 *   repeated, or a secret is not 32 bytes.
 * @see RFC 5869 (HKDF); NIST SP 800-38D (GCM)
 */
export function createSealer(options: SealerOptions): Sealer {
  const now = options.now ?? Date.now;
  if (options.keys.length === 0) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: 'cluster.key: at least one key is required' });
  const secrets = new Map<string, Buffer>();
  for (const k of options.keys) {
    if (!KEY_ID.test(k.id)) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: 'cluster.key: a key id must be 1-32 characters of A-Z a-z 0-9 _ -' });
    if (secrets.has(k.id)) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `cluster.key: key id ${k.id} appears twice` });
    if (k.secret.byteLength !== SECRET_BYTES)
      throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `cluster.key: key ${k.id} must be ${SECRET_BYTES} bytes, got ${k.secret.byteLength}` });
    secrets.set(k.id, Buffer.from(k.secret));
  }
  const currentKeyId = options.keys[0].id;
  const derived = new Map<string, Map<string, KeyObject>>();

  /** The AES key for (kid, purpose), derived on first use; undefined for an unknown kid or a bad purpose. */
  const keyFor = (kid: string, purpose: string): KeyObject | undefined => {
    const secret = secrets.get(kid);
    if (!secret || !PURPOSE.test(purpose)) return undefined;
    let perPurpose = derived.get(kid);
    if (!perPurpose) derived.set(kid, (perPurpose = new Map<string, KeyObject>()));
    let key = perPurpose.get(purpose);
    if (!key) {
      if (perPurpose.size >= MAX_PURPOSES) return undefined;
      key = createSecretKey(Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, Buffer.from(purpose, 'utf8'), 32)));
      perPurpose.set(purpose, key);
    }
    return key;
  };

  return {
    currentKeyId,
    seal(purpose, value, expiresAtMs) {
      if (!Number.isSafeInteger(expiresAtMs)) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'seal: expiresAtMs must be an integer' });
      const key = keyFor(currentKeyId, purpose);
      if (!key) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'seal: bad purpose' });
      let json: string;
      try {
        json = JSON.stringify({ e: expiresAtMs, v: value });
      } catch (err) {
        throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'seal: value is not JSON-serializable', cause: err });
      }
      // JSON.stringify drops a member whose value it cannot carry (undefined, a function, a symbol).
      if (!json.startsWith(`{"e":${expiresAtMs},"v":`)) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'seal: value is not JSON-serializable' });
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(aad(currentKeyId, purpose));
      const body = Buffer.concat([cipher.update(json, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}.${currentKeyId}.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(purpose, token) {
      try {
        if (typeof token !== 'string' || token.length > MAX_TOKEN_CHARS) return undefined;
        const parts = token.split('.');
        if (parts.length !== 4 || parts[0] !== VERSION) return undefined;
        const [, kid, ivText, bodyText] = parts;
        const key = keyFor(kid, purpose);
        if (!key) {
          if (!secrets.has(kid) && KEY_ID.test(kid)) options.onUnknownKey?.(kid);
          return undefined;
        }
        const iv = decodeCanonical(ivText);
        const body = decodeCanonical(bodyText);
        if (!iv || iv.length !== IV_BYTES || !body || body.length <= TAG_BYTES) return undefined;
        const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(aad(kid, purpose));
        decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
        const plain = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
        const parsed = JSON.parse(plain) as unknown;
        if (parsed === null || typeof parsed !== 'object' || !('v' in parsed) || !('e' in parsed)) return undefined;
        const { e, v } = parsed;
        if (typeof e !== 'number' || !(now() < e)) return undefined;
        return v;
      } catch {
        // Authentication failure (decipher.final) and every other refusal look the same to the caller.
        return undefined;
      }
    },
  };
}

/**
 * Parses `SWITCHYARD_CLUSTER_KEY`: one or more base64 (or base64url) 32-byte keys separated by
 * commas or spaces, the current one first, older ones after it during a rotation. Each key's id
 * is derived from the key itself (HKDF-SHA-256, info `key-id`, 6 bytes, base64url: 8 characters),
 * so every replica names a key the same way without configuring ids.
 * @throws SwitchyardError `SWY_ERR_CONFIG_INVALID` when the text holds no key, a key is not
 *   32 bytes of base64, or two keys are equal.
 */
export function parseClusterKeys(text: string): SealKey[] {
  const items = text.split(/[\s,]+/).filter((s) => s.length > 0);
  if (items.length === 0) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: 'cluster.key: empty (set SWITCHYARD_CLUSTER_KEY)' });
  const keys: SealKey[] = [];
  items.forEach((item, i) => {
    const url = item.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    const secret = decodeCanonical(url);
    if (!secret || secret.length !== SECRET_BYTES)
      throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
        detail: `cluster.key: key ${i + 1} is not ${SECRET_BYTES} bytes of base64 (make one with: openssl rand -base64 32)`,
      });
    const id = Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, Buffer.from('key-id', 'utf8'), 6)).toString('base64url');
    if (keys.some((k) => k.id === id)) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `cluster.key: key ${i + 1} repeats an earlier key` });
    keys.push({ id, secret });
  });
  return keys;
}
