// The `auth` and upstream-credentials config shapes: TypeScript types checked against schema.json and outbound-schema.json, and their validation (defaults come from the schemas only).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { JsonSchemaDocument } from '../core/message.js';
import type { Ajv2020, ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020.js';
import { SwitchyardError } from '../core/errors.js';
import { jsonPointer } from '../core/json-pointer.js';

/** JWS algorithms a bearer verifier may accept: asymmetric only (RFC 8725 §3.1, §3.2). */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
/** One of {@link ASYMMETRIC_ALGORITHMS}. */
export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

/** RFC 7662 introspection of opaque tokens (`auth.bearer.introspection`). */
export interface IntrospectionConfig {
  /** Introspection endpoint URL; default: the issuer metadata's `introspection_endpoint`. */
  readonly endpoint?: string;
  /** Client id Switchyard authenticates as (HTTP Basic, RFC 6749 §2.3.1). */
  readonly clientId: string;
  /** Its secret. */
  readonly clientSecret: string;
  /** Most cached results (LRU), entries; default 10,000. */
  readonly cacheMaxEntries?: number;
  /**
   * Longest reuse of a cached result, ms (default 60,000; 0: no cache): bounds how long a token
   * revoked at the authorization server still works. @see RFC 7662 §4 (caching and revocation)
   */
  readonly cacheMaxMs?: number;
  /**
   * Most introspection requests in flight at once (default 32): one more distinct uncached token
   * is refused with SWY_ERR_AUTH_INTROSPECTION_BUSY (503); the same token shares the request in flight.
   * @see RFC 7662 §2.1 (the introspection request); docs/security.md
   */
  readonly maxConcurrent?: number;
}

/** Bearer tokens from one issuer (`auth.bearer`). */
export interface BearerConfig {
  /** Issuer identifier, compared exactly with `iss` and the metadata's `issuer`. */
  readonly issuer: string;
  /** Accepted `aud` values; default the mount's canonical resource URI (RFC 8707). */
  readonly audience?: string | readonly string[];
  /** Scopes every token must grant; default none. */
  readonly scopes?: readonly string[];
  /**
   * Scope hierarchies: a scope → the scopes it implies (transitively; cycles allowed), so that a
   * broad scope meets a narrow requirement; default none (exact comparison).
   * @see 2026-07-28 basic/authorization, step-up authorization flow
   */
  readonly scopeImplies?: Readonly<Record<string, readonly string[]>>;
  /**
   * Further scopes the RFC 9728 metadata lists in `scopes_supported` (those policy rules check,
   * which the gateway cannot read out of CEL); default none. See {@link supportedScopes}.
   * @see RFC 9728 §2 (`scopes_supported`)
   */
  readonly scopesSupported?: readonly string[];
  /** Accepted JWS algorithms; default every asymmetric one. */
  readonly algorithms?: readonly AsymmetricAlgorithm[];
  /** Clock skew allowed for `exp`/`nbf`/`iat`, seconds; default 60. */
  readonly clockToleranceSec?: number;
  /** Further claims copied into `Identity.claims`; default none. */
  readonly claims?: readonly string[];
  /** Timeout of each call to the authorization server, ms; default 5,000. */
  readonly timeoutMs?: number;
  /** Introspection of opaque tokens; off when absent. */
  readonly introspection?: IntrospectionConfig;
}

/** One static API key (`auth.apiKeys[]`). */
export interface ApiKeyConfig {
  /** Holder's name: the identity's subject. */
  readonly name: string;
  /** SHA-256 of the key, 64 hex digits. */
  readonly sha256: string;
  /** Scopes the key grants; default none. */
  readonly scopes?: readonly string[];
}

/** The identity of the local client over `--serve-stdio` (`auth.stdio`). */
export interface StdioIdentityConfig {
  /** Subject; default the operating system user. */
  readonly subject?: string;
  /** Scopes; default none. */
  readonly scopes?: readonly string[];
  /** Claims for policy rules; default none. */
  readonly claims?: Readonly<Record<string, unknown>>;
}

/** The `auth` config key. Exactly as the product documents it (docs/security.md). */
export interface AuthConfig {
  readonly bearer?: BearerConfig;
  readonly apiKeys?: readonly ApiKeyConfig[];
  /** No authentication; excludes the others. */
  readonly none?: true;
  /** Who the `--serve-stdio` client is; no effect on HTTP mounts. */
  readonly stdio?: StdioIdentityConfig;
}

/** Token endpoint settings shared by both grants. */
interface TokenEndpointConfig {
  /** Token endpoint URL (or give `issuer`). */
  readonly tokenUrl?: string;
  /** Issuer whose metadata names the token endpoint (or give `tokenUrl`). */
  readonly issuer?: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Space-separated scopes to request. */
  readonly scope?: string;
  /** Client authentication at the token endpoint; default `client_secret_basic`. */
  readonly authMethod?: 'client_secret_basic' | 'client_secret_post';
  /** Timeout of each token request, ms; default 5,000. */
  readonly timeoutMs?: number;
}

/** Client credentials grant settings (RFC 6749 §4.4). */
export interface ClientCredentialsConfig extends TokenEndpointConfig {
  /** RFC 8707 `resource`: the upstream's canonical URI. */
  readonly resource?: string;
}

/** Token exchange settings (RFC 8693). */
export interface TokenExchangeConfig extends TokenEndpointConfig {
  /** RFC 8693 `audience`. */
  readonly audience?: string;
  /** RFC 8693 / RFC 8707 `resource`. */
  readonly resource?: string;
  /** Most cached exchanged tokens (LRU), entries; default 10,000. */
  readonly cacheMaxEntries?: number;
}

/** An upstream's outbound credentials: exactly one of the three. */
export type OutboundConfig =
  | { readonly headers: Readonly<Record<string, string>> }
  | { readonly clientCredentials: ClientCredentialsConfig }
  | { readonly tokenExchange: TokenExchangeConfig };

// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- typescript-eslint takes the import attributes of a type query for a value
type AuthSchemaJson = typeof import('./schema.json', { with: { type: 'json' } });
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- typescript-eslint takes the import attributes of a type query for a value
type OutboundSchemaJson = typeof import('./outbound-schema.json', { with: { type: 'json' } });

/** The JSON Schema (draft 2020-12) fragment of the `auth` key, from `src/auth/schema.json`; frozen. */
export const AUTH_SCHEMA: JsonSchemaDocument = deepFreeze(JSON.parse(readFileSync(new URL('./schema.json', import.meta.url), 'utf8')) as JsonSchemaDocument);

/** The JSON Schema fragment of an upstream's outbound credentials, from `src/auth/outbound-schema.json`; frozen. */
export const OUTBOUND_SCHEMA: JsonSchemaDocument = deepFreeze(
  JSON.parse(readFileSync(new URL('./outbound-schema.json', import.meta.url), 'utf8')) as JsonSchemaDocument,
);

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v as object)) deepFreeze(child);
  }
  return v;
}

const requireHere = createRequire(import.meta.url);

/**
 * A new ajv instance for JSON Schema draft 2020-12 with `options` and ajv-formats' formats.
 * ajv and ajv-formats are loaded at the first call, not at import: a start whose config needs no
 * compiled schema (the build's standalone config validator, no `auth`) never loads them, which
 * is about 20 ms of every start (bench/startup.mjs). Both are CommonJS, so `require` loads them
 * synchronously. @see https://ajv.js.org/options.html
 */
export function newAjv2020(options: Options): Ajv2020 {
  const { Ajv2020: Ctor } = requireHere('ajv/dist/2020.js') as { Ajv2020: new (o: Options) => Ajv2020 };
  const ajv = new Ctor(options);
  (requireHere('ajv-formats') as (a: Ajv2020) => void)(ajv);
  return ajv;
}

const compiled = new Map<object, ValidateFunction>();
function validator(schema: object): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    // The same options as the config loader, so a fragment behaves alike in both places.
    const ajv = newAjv2020({ useDefaults: true, allErrors: true, strict: true, coerceTypes: true, verbose: true });
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/**
 * The patterns of the `auth` fragment that are worded rather than quoted, by pattern source: the
 * config loader (src/config/load.ts) words them the same way.
 */
export const AUTH_PATTERN_WORDS: Readonly<Record<string, string>> = {
  // RFC 6749 §3.3: scope-token = 1*NQCHAR, NQCHAR = %x21 / %x23-5B / %x5D-7E
  '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$': 'must be an RFC 6749 scope token (printable ASCII without spaces, `"` or `\\`)',
};

/**
 * ajv's message, but in words for the URL patterns (src/config/patterns.ts, which this layer
 * cannot import; the config loader words them the same way), which are too long to quote, and
 * for {@link AUTH_PATTERN_WORDS}.
 */
function messageOf(e: ErrorObject): string {
  const pattern = e.keyword === 'pattern' ? String((e.params as { pattern?: unknown }).pattern) : '';
  if (pattern.startsWith('^[hH][tT][tT][pP][sS]?://')) return 'must be an http:// or https:// URL with a host (e.g. https://mcp.example.com/mcp)';
  if (pattern.startsWith('^(?:(?![hH][tT][tT][pP][sS]?:)')) return 'must be an absolute URI; an http:// or https:// one needs a host';
  const words = AUTH_PATTERN_WORDS[pattern];
  if (words !== undefined) return words;
  return e.message ?? 'is invalid';
}

function validate<T>(schema: object, value: unknown, what: string): T {
  const copy: unknown = structuredClone(value);
  const v = validator(schema);
  if (!v(copy)) {
    // A bad map key is named in its path, escaped as the config loader escapes it (RFC 6901 §3:
    // a scope token may hold `/` and `~`); ajv's second error for it ('property name must be
    // valid', keyword propertyNames) says nothing more. An unknown key is named the same way.
    const errors = (v.errors ?? [])
      .filter((e) => e.keyword !== 'propertyNames')
      .map((e) => {
        const extra = e.keyword === 'additionalProperties' ? (e.params as { additionalProperty?: unknown }).additionalProperty : undefined;
        if (typeof extra === 'string') return { path: `${what}${e.instancePath}${jsonPointer([extra])}`, message: 'is not a known key' };
        if (e.propertyName !== undefined)
          return { path: `${what}${e.instancePath}${jsonPointer([e.propertyName])}`, message: `is not a valid name: ${messageOf(e)}` };
        return { path: `${what}${e.instancePath}`, message: messageOf(e) };
      });
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
      detail: errors.map((e) => `${e.path}: ${e.message}`).join('; '),
      data: { source: what, errors },
    });
  }
  return deepFreeze(copy as T);
}

/** Every default of {@link AuthConfig} applied. */
export type ResolvedAuthConfig = AuthConfig & { readonly bearer?: ResolvedBearerConfig; readonly apiKeys?: readonly Required<ApiKeyConfig>[] };
/** Every default of {@link BearerConfig} applied. */
export type ResolvedBearerConfig = Required<Omit<BearerConfig, 'audience' | 'introspection'>> &
  Pick<BearerConfig, 'audience'> & { readonly introspection?: Required<Omit<IntrospectionConfig, 'endpoint'>> & Pick<IntrospectionConfig, 'endpoint'> };

/**
 * Validates an `auth` value against {@link AUTH_SCHEMA} and returns a deep-frozen copy with the
 * schema's defaults applied (the input is not changed).
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID listing every failing path (`data.errors`).
 */
export function resolveAuthConfig(config: unknown): ResolvedAuthConfig {
  return validate<ResolvedAuthConfig>(AUTH_SCHEMA, config, 'auth');
}

/**
 * Validates `auth.bearer` alone (for {@link createBearerVerifier} used on its own).
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID
 */
export function resolveBearerConfig(config: unknown): ResolvedBearerConfig {
  return resolveAuthConfig({ bearer: config }).bearer as ResolvedBearerConfig;
}

/**
 * Validates an upstream's outbound credentials against {@link OUTBOUND_SCHEMA}; defaults applied, deep-frozen copy.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID listing every failing path.
 */
export function resolveOutboundConfig(config: unknown): OutboundConfig {
  return validate<OutboundConfig>(OUTBOUND_SCHEMA, config, 'credentials');
}

// Compile-time checks: the hand-written types name exactly the keys the schemas define.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
type Props<T> = T extends { properties: infer P } ? keyof P : never;
type AuthProps = AuthSchemaJson['properties'];
type OutProps = OutboundSchemaJson['properties'];
type _SchemaChecks = [
  Assert<Same<Props<AuthSchemaJson>, keyof AuthConfig>>,
  Assert<Same<Props<AuthProps['bearer']>, keyof BearerConfig>>,
  Assert<Same<Props<AuthProps['bearer']['properties']['introspection']>, keyof IntrospectionConfig>>,
  Assert<Same<Props<AuthProps['apiKeys']['items']>, keyof ApiKeyConfig>>,
  Assert<Same<Props<AuthProps['stdio']>, keyof StdioIdentityConfig>>,
  Assert<Same<Props<OutboundSchemaJson>, 'headers' | 'clientCredentials' | 'tokenExchange'>>,
  Assert<Same<Props<OutProps['clientCredentials']>, keyof ClientCredentialsConfig>>,
  Assert<Same<Props<OutProps['tokenExchange']>, keyof TokenExchangeConfig>>,
];
