// The config loader: reads a YAML or JSON file, expands ${VAR}, validates it against schema.json, normalizes it, freezes it.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type { Ajv2020, ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020.js';
import { AUTH_PATTERN_WORDS, AUTH_SCHEMA, OUTBOUND_SCHEMA, newAjv2020, type AuthConfig, type OutboundConfig } from '../auth/config.js';
import { SwitchyardError } from '../core/errors.js';
import type { JsonSchemaDocument } from '../core/message.js';
import { jsonPointer } from '../core/json-pointer.js';
import type { Limits } from '../core/limits.js';
import { prefixSplitsBack } from '../core/upstream.js';
import { serializedOrigin } from '../core/url-text.js';
import {
  POLICY_SCHEMA,
  duplicateLimitNames,
  renameConflicts,
  type ComponentCuration,
  type PolicyConfig,
  type RateLimitConfig,
  type ResourceCuration,
} from '../policy/config.js';
import type { LOG_LEVEL_NAMES } from '../log/logger.js';
import type { RuleSource } from '../policy/policy.js';
import { overlay } from './options.js';
import { HOST_AND_URL_WORDS } from './patterns.js';

/** What a `trustProxy` entry must be (the schema's pattern and {@link trustedPeerOk} say it alike, so one issue per entry). */
const TRUSTED_PEER_MESSAGE =
  'must be an IPv4 or IPv6 address, a CIDR with a prefix length in range (10.0.0.0/8, fd00::/8), or loopback, linklocal, uniquelocal';

// ---------------------------------------------------------------------------------------------
// Types. Hand-written; the key sets are checked against schema.json at compile time (bottom of
// this file) and the enums at test time (test/invariants/config-examples.test.ts).
// ---------------------------------------------------------------------------------------------

/** What `era` may say: a revision an HTTP upstream speaks, `auto` to probe it, or `match-client` to follow each client's era. */
export const UPSTREAM_ERAS = ['auto', 'match-client', '2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;
/** An HTTP upstream's configured era. */
export type UpstreamEra = (typeof UPSTREAM_ERAS)[number];

/** How a stateful HTTP upstream's sessions map to client sessions. */
export const ISOLATIONS = ['per-session', 'shared'] as const;
/** `per-session` (one upstream session per client session) or `shared` (one for all). */
export type Isolation = (typeof ISOLATIONS)[number];

/** The values `transport` and `type` accept, in the vocabulary of MCP client config files. */
export const TRANSPORT_NAMES = ['stdio', 'http', 'streamable-http', 'streamableHttp', 'sse', 'embedded'] as const;

/** Keys of a stdio child or an HTTP connection, refused on an embedded upstream (`credentials` has its own message). */
const EMBEDDED_REFUSED = ['era', 'isolation', 'headers', 'forwardAuthorization', 'args', 'env', 'cwd'] as const;

/** Which client eras a mount serves. */
export interface DialectSwitches {
  /** 2026-07-28 stateless requests (default on). */
  readonly modern: boolean;
  /** 2025-era Streamable HTTP: initialize + `Mcp-Session-Id` (default on). */
  readonly streamable: boolean;
  /** 2024-11-05 HTTP+SSE at the mount's `sse`/`messages` sibling paths (default off). */
  readonly legacySse: boolean;
}

/** Where the gateway listens. */
export interface ListenConfig {
  /** Interface to bind (default `127.0.0.1`); `localhost.` is given as `localhost`. */
  readonly host: string;
  /** TCP port, 0 to 65535; 0 picks a free one (default 7600). */
  readonly port: number;
  /** Prefix put before every mount path, no trailing slash; '' (default) means none. */
  readonly path: string;
}

/** An upstream's optional rules, as written and after normalization alike. */
interface UpstreamRules {
  /** Authentication of this upstream's own mount, replacing the top-level `auth` there (docs/security.md). */
  readonly auth?: AuthConfig;
  /** Authorization rules for calls to this upstream, replacing the top-level `policy` (docs/policy.md). */
  readonly policy?: Readonly<PolicyConfig>;
  /** Rate limits for calls to this upstream, replacing the top-level `rateLimits`. */
  readonly rateLimits?: readonly Readonly<RateLimitConfig>[];
  /** Tool curation: include/exclude globs, rename, describe. */
  readonly tools?: Readonly<ComponentCuration>;
  /** Prompt curation. */
  readonly prompts?: Readonly<ComponentCuration>;
  /** Resource and resource template curation (not renamed). */
  readonly resources?: Readonly<ResourceCuration>;
  /** Check tools/call arguments against the tool's inputSchema (absent: on, the policy fragment's default). */
  readonly validateArguments?: boolean;
}

/** Keys every upstream has after normalization. */
interface UpstreamCommon extends UpstreamRules {
  /** The upstream's name (its key in `upstreams`/`mcpServers`), `^[a-zA-Z0-9_-]{1,64}$`. */
  readonly name: string;
  /** MCP path of its mount, relative to `listen.path` (default `/NAME/mcp`); see {@link listMounts}. */
  readonly path: string;
  /** Effective dialects: the mount's switches over the top-level ones. */
  readonly dialects: DialectSwitches;
  /** Effective bounds: the mount's overrides over the top-level `limits`. */
  readonly limits: Readonly<Limits>;
  /** Free text from the file, if any. */
  readonly description?: string;
  /** The gateway is ready without it, and `requireUpstreams` does not wait for it (default false). */
  readonly optional: boolean;
}

/** A stdio upstream: a child process speaking MCP on stdin/stdout. */
export interface StdioUpstreamConfig extends UpstreamCommon {
  readonly transport: 'stdio';
  /** Program to run (looked up on PATH; not run through a shell). */
  readonly command: string;
  /** Its arguments, as written (default none). */
  readonly args: readonly string[];
  /** Environment variables set for the child (default none). */
  readonly env: Readonly<Record<string, string>>;
  /** Working directory, absolute (a relative one is resolved against the config file's directory). */
  readonly cwd?: string;
  /** The era to speak to the child, or `auto` to probe it (default `auto`; `match-client` is not possible over one connection). */
  readonly era: UpstreamEra;
}

/** An HTTP upstream: a Streamable HTTP, stateless 2026-07-28 or HTTP+SSE server. */
export interface HttpUpstreamConfig extends UpstreamCommon {
  readonly transport: 'http';
  /** The server's MCP endpoint (its SSE endpoint for 2024-11-05), http or https. */
  readonly url: string;
  /** Headers sent on every outbound request (default none). */
  readonly headers: Readonly<Record<string, string>>;
  /** Its revision, or `auto` to probe (default `auto`; `transport: sse` means `2024-11-05`). */
  readonly era: UpstreamEra;
  /**
   * With `era` 2024-11-05: how the operator set it, in the words they wrote, and what the same
   * setting says for Streamable HTTP (`type: sse` / `type: http`, `transport: sse` / `transport: http`,
   * `era: 2024-11-05` / `era: auto`, `--upstream-era 2024-11-05` / `--upstream-era auto` for
   * a config from flags alone, or `upstreamEra: '2024-11-05'` / `upstreamEra: 'auto'` for the
   * library's `startGateway` options), for the advice when its URL serves no HTTP+SSE stream. Not a key
   * of the file; absent with any other era.
   */
  readonly sseSetting?: { readonly written: string; readonly streamable: string };
  /** Upstream session sharing for stateful eras (default `per-session`). */
  readonly isolation: Isolation;
  /** Forward the client's `Authorization` header (default false: no token passthrough). */
  readonly forwardAuthorization: boolean;
  /** The upstream's own credential: static headers, client credentials or token exchange (docs/security.md). */
  readonly credentials?: OutboundConfig;
}

/** The demo server built into Switchyard (no process, no network). */
export interface EmbeddedUpstreamConfig extends UpstreamCommon {
  readonly transport: 'embedded';
}

/** One upstream, discriminated by `transport`. */
export type UpstreamConfig = StdioUpstreamConfig | HttpUpstreamConfig | EmbeddedUpstreamConfig;

/** The list cache (src/core/list-cache.ts). */
export interface ListCacheConfig {
  /** Life of a list whose upstream announces no changes to it, ms; 0: not cached (default 5,000). */
  readonly ttlMs: number;
  /** Longest life of a list whose upstream announces changes, ms; 0: cache off (default 600,000). */
  readonly maxAgeMs: number;
  /** Lists kept at most, entries (default 10,000). */
  readonly maxEntries: number;
  /** What the kept lists take together at most, bytes (default 67,108,864). */
  readonly maxBytes: number;
}

/** 2026-07-28 caching fields for results whose upstream gave none (server/utilities/caching). */
export interface CacheConfig {
  /** `ttlMs` for results without one, ms; 0 means do not cache (default 0). */
  readonly ttlMs: number;
  /** `cacheScope` for results without one (default `private`). */
  readonly cacheScope: 'public' | 'private';
}

/** The aggregate mount: several upstreams on one path, names prefixed `NAME` + `separator`. */
export interface AggregateConfig {
  /** MCP path, relative to `listen.path` (default `/mcp`). */
  readonly path: string;
  /** Upstream names it serves, in file order (default: every upstream). */
  readonly upstreams: readonly string[];
  /** Between upstream name and tool/prompt name (default `__`). */
  readonly separator: string;
}

/**
 * Several replicas without sticky routing (docs/scaling.md): sealed session state, and Redis for
 * what cannot be sealed. Present, even empty, it turns sealed session ids on.
 */
export interface ClusterConfig {
  /** `redis://…` / `rediss://…` (or `--redis URL`); absent: one replica, its ledger in memory. */
  readonly redis?: string;
  /** Base64 32-byte sealing keys, current first, comma-separated (`SWITCHYARD_CLUSTER_KEY`); required with `redis`. */
  readonly key?: string;
  /** This replica's id (`SWITCHYARD_REPLICA_ID`); absent: host name and 4 random bytes. */
  readonly replicaId?: string;
  /** Longest life of a sealed session id, ms (default 86,400,000: one day). */
  readonly sessionMaxAgeMs: number;
  /** `/readyz` fails while Redis is down (default false: Redis down is only `degraded`). */
  readonly readinessRequiresRedis: boolean;
}

/**
 * An upstream's entry as written, in `upstreams` or `mcpServers` (docs/config.md, "Upstreams"):
 * every key optional; `command` makes a stdio upstream, `url` an HTTP one, neither with
 * `transport: embedded` the demo. The client-only keys of MCP client files (`type`, `disabled`,
 * `autoApprove`, `alwaysAllow`, `timeout`) are accepted and dropped (`disabled: true` drops the
 * entry). Checked against `schema.json`'s keys at compile time (below); what the schema checks
 * beyond types (patterns, bounds, one of `command` and `url`) is reported by {@link validateConfig}.
 */
export interface UpstreamInput extends UpstreamRules {
  readonly command?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly era?: UpstreamEra;
  readonly isolation?: Isolation;
  readonly forwardAuthorization?: boolean;
  readonly credentials?: OutboundConfig;
  readonly transport?: (typeof TRANSPORT_NAMES)[number];
  readonly type?: (typeof TRANSPORT_NAMES)[number];
  /** MCP path of its mount, relative to `listen.path` (default `/NAME/mcp`). */
  readonly path?: string;
  /** This mount's dialect switches over the top-level ones. */
  readonly dialects?: Partial<DialectSwitches>;
  /** This mount's bounds over the top-level `limits` (units as in {@link Limits}). */
  readonly limits?: Partial<Limits>;
  readonly description?: string;
  readonly disabled?: boolean;
  readonly optional?: boolean;
  readonly autoApprove?: readonly string[];
  readonly alwaysAllow?: readonly string[];
  /** An MCP client file's timeout, seconds; accepted and dropped. */
  readonly timeout?: number;
}

/**
 * A config as written (docs/config.md): the shape of `schema.json` before defaults, every key
 * optional, in Switchyard's shape (`upstreams`) or the MCP client files' (`mcpServers`), not both.
 * `{}` serves the embedded demo at `/mcp`. This is what `createSwitchyard` takes; a file read from
 * disk is the same value. The key sets are checked against the schema at compile time (below);
 * values the schema refuses (a pattern, a bound, a cross-field rule) are `SWY_ERR_CONFIG_INVALID`
 * from {@link validateConfig}, each with its JSON Pointer.
 */
export interface ConfigInput {
  /** URI or path of the schema, for editors; ignored. */
  readonly $schema?: string;
  readonly listen?: Partial<ListenConfig>;
  readonly dialects?: Partial<DialectSwitches>;
  readonly allowedOrigins?: readonly string[];
  readonly allowedHosts?: readonly string[];
  readonly cors?: { readonly origins: readonly string[] } & Partial<Omit<CorsConfig, 'origins'>>;
  readonly trustProxy?: false | number | readonly string[];
  readonly publicBaseUrl?: string;
  readonly logLevel?: (typeof LOG_LEVEL_NAMES)[number];
  readonly limits?: Partial<Limits>;
  readonly requestStateKey?: string;
  readonly strict?: FrozenConfig['strict'];
  readonly cache?: Partial<CacheConfig>;
  readonly auth?: AuthConfig;
  readonly policy?: Readonly<PolicyConfig>;
  readonly rateLimits?: readonly Readonly<RateLimitConfig>[];
  readonly listCache?: Partial<ListCacheConfig>;
  readonly upstreams?: Readonly<Record<string, UpstreamInput>>;
  readonly mcpServers?: Readonly<Record<string, UpstreamInput>>;
  readonly aggregate?: Partial<AggregateConfig>;
  /** The admin listener's place, or `false` to turn it off (`createSwitchyard` starts none). */
  readonly admin?: false | Partial<AdminConfig>;
  readonly requireUpstreams?: boolean;
  readonly accessLogLevel?: AccessLogLevel;
  readonly cluster?: Partial<ClusterConfig>;
}

/**
 * A validated, normalized config: the shape of `schema.json` with every default applied, an
 * `mcpServers` file turned into `upstreams`, disabled upstreams dropped, client-only keys
 * (`type`, `disabled`, `autoApprove`, `alwaysAllow`, `timeout`) removed, and each upstream's
 * `dialects` and `limits` merged over the top-level ones. Deep-frozen.
 */
export interface FrozenConfig {
  readonly listen: ListenConfig;
  /** Top-level dialect switches (those of the aggregate mount). */
  readonly dialects: DialectSwitches;
  /** Hosts an `Origin` may name, `host[:port]` (default localhost, 127.0.0.1, [::1]). */
  readonly allowedOrigins: readonly string[];
  /** When non-empty, `Host` must be one of these (default empty: the loopback names on a loopback bind, else not checked). */
  readonly allowedHosts: readonly string[];
  /** CORS for browser pages on other origins, when configured (absent: none; docs/security.md, "CORS"). */
  readonly cors?: CorsConfig;
  /** Which peers may set `X-Forwarded-*`: false (default), a hop count, or addresses and CIDRs. */
  readonly trustProxy: false | number | readonly string[];
  /** The URL clients reach the listener's root at, when set (overrides `X-Forwarded-*`). */
  readonly publicBaseUrl?: string;
  /** pino level (default `info`). */
  readonly logLevel: (typeof LOG_LEVEL_NAMES)[number];
  /** Top-level bounds, every key present (defaults: DEFAULT_LIMITS). */
  readonly limits: Readonly<Limits>;
  /** HMAC key for `requestState`, at least 32 characters; absent: generate one at start. */
  readonly requestStateKey?: string;
  /** Strict schema mode (default `off`). */
  readonly strict: 'off' | 'log' | 'reject';
  /** 2026-07-28 caching defaults. */
  readonly cache: CacheConfig;
  /** The list cache. */
  readonly listCache: ListCacheConfig;
  /** Enabled upstreams by name, in file order; at least one (a config with none serves the embedded demo as `default` at `/mcp`). */
  readonly upstreams: Readonly<Record<string, UpstreamConfig>>;
  /** The aggregate mount, when configured. */
  readonly aggregate?: AggregateConfig;
  /** Authentication of every mount that sets none of its own; absent: none (loopback binds only). */
  readonly auth?: AuthConfig;
  /** Authorization rules of every upstream that sets none of its own; absent: everything allowed. */
  readonly policy?: Readonly<PolicyConfig>;
  /** Rate limits of every upstream that sets none of its own. */
  readonly rateLimits?: readonly Readonly<RateLimitConfig>[];
  /** The admin listener, or false when off (default `127.0.0.1:7601`). */
  readonly admin: AdminConfig | false;
  /** Fail the start when a non-optional upstream cannot start (default false: mark it down and reconnect). */
  readonly requireUpstreams: boolean;
  /** Level of the access line per client request (default `info`). */
  readonly accessLogLevel: AccessLogLevel;
  /** Replicas sharing sessions, when configured. */
  readonly cluster?: ClusterConfig;
}

/**
 * The `cors` key, defaults applied: which origins' pages may read answers, how long a preflight
 * answer may be cached, whether credentials are allowed (src/transports/cors.ts applies it).
 * @see WHATWG Fetch §3.2 (the CORS protocol)
 */
export interface CorsConfig {
  /** Serialized origins (`https://app.example`), each one `allowedOrigins` lets through; 1 to 64. */
  readonly origins: readonly string[];
  /** `Access-Control-Max-Age` of a preflight answer, seconds (0 to 86400; default 600). */
  readonly maxAgeSec: number;
  /** Send `Access-Control-Allow-Credentials: true` (default false). */
  readonly allowCredentials: boolean;
}

/** Where the admin listener binds (docs/operations.md). */
export interface AdminConfig {
  /** Interface (default `127.0.0.1`); `localhost.` is given as `localhost`. */
  readonly host: string;
  /** TCP port, 0 picks a free one (default 7601). */
  readonly port: number;
  /** Open connections from one remote address, 1 to 64 (default 8); one more is closed at accept. */
  readonly maxConnectionsPerAddress: number;
}

/** Levels of the access line, or `off`. */
export type AccessLogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'off';

/** One failing place in a config: a JSON Pointer into the file as written (`''` is the whole file) and what is wrong. */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/** Options of {@link validateConfig} and {@link loadConfig}. */
export interface ValidateOptions {
  /** Where `${VAR}` values come from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Directory a relative `cwd` is resolved against (default: the file's directory, or the process's cwd). */
  baseDir?: string;
  /** Expand `${VAR}` in string values (default true; flags are taken literally). */
  expandEnv?: boolean;
  /**
   * In whose words advice about the single upstream names its settings: `flags`, the CLI without
   * `--config` (`--upstream-era`); `options`, the `GatewayOptions` of the library's
   * `startGateway` (`upstreamEra`); `file` (the default), a config's own keys (`era`).
   */
  writtenAs?: 'file' | 'flags' | 'options';
  /**
   * Raw config laid over the file after `${VAR}` expansion, taken literally (what flags and the
   * environment set; see `overlay` in options.ts).
   */
  overrides?: Record<string, unknown>;
  /**
   * What the detail text calls the config as a whole, for an issue about all of it (issue path
   * `''`): default `(file)`, which names the file `source` is. A caller that passed a value, not a
   * file, names that value (the library: `config (the first argument)`), and is told it must be an
   * object, with no mention of YAML. `data.errors` keeps the path `''` either way.
   */
  whole?: string;
  /**
   * Whether the `SWITCHYARD_*` environment variables can set keys (default true: the CLI). The
   * library reads no environment, so its messages name only the config's keys (false).
   */
  environment?: boolean;
  /**
   * Compiles policy rules (`ruleIssues` of src/policy/policy.ts) for a config refused for other
   * reasons, so that the rules' errors (CEL, duplicate names) are listed with the others in one
   * run, each at its path. {@link loadConfig} passes it for a file with a policy (the CEL library
   * is loaded only then), createSwitchyard {@link ruleIssuesNow}. Without it a refused config
   * lists no rule errors (duplicate limit names and renames are listed either way); a config that
   * passes has its rules compiled when the gateway assembles (src/policy/wire.ts).
   */
  checkRules?: (rules: readonly RuleSource[], base: string) => ConfigIssue[];
}

// ---------------------------------------------------------------------------------------------
// The schema, compiled once.
// ---------------------------------------------------------------------------------------------

// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- typescript-eslint takes the import attributes of a type query for a value
type Schema = typeof import('./schema.json', { with: { type: 'json' } });

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v as object)) deepFreeze(child);
  }
  return v;
}

/** The config JSON Schema (draft 2020-12), as parsed from `src/config/schema.json`; frozen. */
export const CONFIG_SCHEMA: JsonSchemaDocument = deepFreeze(JSON.parse(readFileSync(new URL('./schema.json', import.meta.url), 'utf8')) as JsonSchemaDocument);

/**
 * ajv's options for the config schema. coerceTypes: YAML and ${VAR} give strings where numbers or
 * booleans are meant (and numbers where env values and args must be strings); the schema says
 * which. allowUnionTypes: `admin` is an object or `false`; `trustProxy` is false, a hop count or a
 * list; with a union `type` ajv coerces only a value that matches none of the types (anyOf would
 * coerce in every branch). The schemas are ours and fixed, so they are checked against the
 * 2020-12 meta-schema by a test (test/invariants/config-schema.test.ts), not at every start.
 */
const CONFIG_AJV_OPTIONS = {
  useDefaults: true,
  allErrors: true,
  strict: true,
  coerceTypes: true,
  verbose: true,
  allowUnionTypes: true,
  validateSchema: false,
} as const;

/**
 * The ajv instance that validates configs: {@link CONFIG_AJV_OPTIONS}, the `uri` format, and the
 * auth, credentials and policy fragments, which schema.json names by `$id`. `code` is ajv's code
 * generation options (the build passes `source` and the formats' import for standalone code).
 * @see https://ajv.js.org/standalone.html
 */
export function configAjv(code: Options['code'] = {}): Ajv2020 {
  const ajv = newAjv2020({ ...CONFIG_AJV_OPTIONS, code });
  for (const fragment of [AUTH_SCHEMA, OUTBOUND_SCHEMA, POLICY_SCHEMA]) ajv.addSchema(structuredClone(fragment));
  return ajv;
}

/**
 * SHA-256 (hex) of everything the config validator is made from: the schema, its fragments,
 * ajv's options and ajv's version. The build's standalone validator carries the digest it was
 * made from; one that differs (a schema edited after the build) is not used.
 */
export function configSchemaDigest(): string {
  const ajvVersion = (requireHere('ajv/package.json') as { version: string }).version;
  return createHash('sha256')
    .update(JSON.stringify([CONFIG_SCHEMA, AUTH_SCHEMA, OUTBOUND_SCHEMA, POLICY_SCHEMA, CONFIG_AJV_OPTIONS, ajvVersion]))
    .digest('hex');
}

/** File name of the standalone validator the build writes beside this module (dist/src/config/). */
export const STANDALONE_VALIDATOR_FILE = 'config-validator.generated.cjs';

const requireHere = createRequire(import.meta.url);
let compiled: ValidateFunction | undefined;
let compiledFrom: 'standalone' | 'compiled' | undefined;

/**
 * The V8 code cache of the standalone validator, written beside it by the build
 * (src/config/build-validator.ts) after a run, so it holds the bytecode of the functions a
 * start calls, not only the top level. Its first 32 bytes are the SHA-256 of the source it was
 * made from ({@link sourceDigest}): V8's own check of a cache against its source compares only
 * the length, and a cache of another source of the same length would run that other code.
 */
export const STANDALONE_VALIDATOR_CACHE = `${STANDALONE_VALIDATOR_FILE}.v8cache`;

/** SHA-256 of `source` (32 bytes), which a {@link STANDALONE_VALIDATOR_CACHE} starts with. */
export function sourceDigest(source: string): Buffer {
  return createHash('sha256').update(source).digest();
}

/** What {@link compileStandalone} gives: the module's exports and the script they came from. */
export interface CompiledStandalone {
  readonly exports: { default?: ValidateFunction; digest?: string };
  /** The compiled script; `createCachedData()` gives a code cache for the next start. */
  readonly script: Script;
  /** True when `cachedData` was given and V8 refused it (another V8 or other flags): compiled from source. */
  readonly cacheRejected: boolean;
}

/**
 * Runs the CommonJS file `file` (its text `source`) as Node's loader would (the same wrapper,
 * `require` relative to it), compiled with `cachedData` (a V8 code cache) when given. V8 refuses
 * a cache of another V8 version or other flags and compiles from source, so such a cache costs
 * only the time it would have saved; that the cache is of this source is the caller's to check
 * ({@link STANDALONE_VALIDATOR_CACHE}). Reading, compiling and first running the 640 KB
 * validator took about 40 ms of every start; with the cache, about 17 (docs/performance.md).
 * @throws whatever reading or running the file throws.
 * @see https://nodejs.org/api/vm.html#class-vmscript
 */
export function compileStandalone(file: string, cachedData?: Buffer, source: string = readFileSync(file, 'utf8')): CompiledStandalone {
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: file, cachedData });
  const module = { exports: {} as CompiledStandalone['exports'] };
  const wrapper = script.runInThisContext() as (e: unknown, r: NodeJS.Require, m: unknown, f: string, d: string) => void;
  wrapper(module.exports, createRequire(file), module, file, path.dirname(file));
  return { exports: module.exports, script, cacheRejected: cachedData !== undefined && script.cachedDataRejected === true };
}

/**
 * The standalone validator in `file` (CommonJS, as src/config/build-validator.ts writes it) when
 * it is there and was made from this schema ({@link configSchemaDigest}), else undefined. Its
 * code cache ({@link STANDALONE_VALIDATOR_CACHE}) is used when it is beside it.
 * Compiling the schema was about a quarter of a start's CPU (220 ms).
 */
export function readStandaloneValidator(
  file: string = fileURLToPath(new URL(`./${STANDALONE_VALIDATOR_FILE}`, import.meta.url)),
): ValidateFunction | undefined {
  let mod: CompiledStandalone['exports'];
  try {
    const source = readFileSync(file, 'utf8');
    let cache: Buffer | undefined;
    try {
      const framed = readFileSync(path.join(path.dirname(file), STANDALONE_VALIDATOR_CACHE));
      if (framed.subarray(0, 32).equals(sourceDigest(source))) cache = framed.subarray(32);
    } catch {
      cache = undefined; // no cache: compiled from source
    }
    mod = compileStandalone(file, cache, source).exports;
  } catch {
    return undefined;
  }
  return mod.digest === configSchemaDigest() && typeof mod.default === 'function' ? mod.default : undefined;
}

function validator(): ValidateFunction {
  if (!compiled) {
    const standalone = readStandaloneValidator();
    compiledFrom = standalone ? 'standalone' : 'compiled';
    // ajv's code optimisation passes cost more than they save for a validator that runs once per config.
    compiled = standalone ?? configAjv({ optimize: false }).compile(CONFIG_SCHEMA as object);
  }
  return compiled;
}

/** Where the config validator came from: the build's standalone code, or compiled at start; undefined before the first config. */
export function configValidatorOrigin(): 'standalone' | 'compiled' | undefined {
  return compiledFrom;
}

// ---------------------------------------------------------------------------------------------
// Parsing and ${VAR} expansion.
// ---------------------------------------------------------------------------------------------

function invalid(source: string, errors: ConfigIssue[], cause?: unknown, whole = '(file)'): SwitchyardError {
  const lines = errors.map((e) => `${e.path || whole}: ${e.message}`);
  return new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
    detail: `${source}: ${errors.length} error${errors.length === 1 ? '' : 's'}: ${lines.join('; ')}`,
    data: { source, errors },
    cause,
  });
}

/**
 * V8's JSON.parse message with the piece of the file it quotes left out: `Unexpected token 'S',
 * ..."Api-Key": SECRET_JSO"... is not valid JSON` quotes up to 20 characters around the fault,
 * and a config file's faults sit beside its secrets (a value left unquoted, quoted with `'`).
 * The fault is named by its line and column instead, and by its character when that is
 * punctuation. The messages that give a position (`… in JSON at position 7`) quote nothing.
 * Node keeps the quoted text in the error itself, so the error is not kept as the cause either.
 * @see RFC 6750 §5.3 (credentials in logs)
 */
function jsonErrorText(message: string, body: string): string {
  const m = /^Unexpected token '([\s\S])', (\.\.\.)?"([\s\S]*?)"(\.\.\.)? is not valid JSON$/.exec(message);
  if (!m) return message;
  const [, token, before, quoted] = m;
  // V8 quotes the whole text when it is short, else 10 characters either side of the fault.
  let at = before ? body.indexOf(quoted) + 10 : quoted.indexOf(token);
  if (at < 0 || body[at] !== token) at = -1;
  const what = /[A-Za-z0-9]/.test(token) ? 'unexpected character' : `unexpected ${JSON.stringify(token)}`;
  if (at < 0) return `${what} (a value not written as JSON: strings need double quotes)`;
  const lines = body.slice(0, at).split('\n');
  return `${what} at line ${lines.length}, column ${lines[lines.length - 1].length + 1} (a value not written as JSON: strings need double quotes)`;
}

/**
 * The yaml package's message of a failure to build the value, with the alias it names left out:
 * `password: *hunter2` reads as an alias, and `Unresolved alias (…): hunter2` would print the
 * password. The other messages (taken from the parser's errors, each cut at its first line) name
 * a position, not the text.
 */
function yamlErrorText(message: string): string {
  const named = message.startsWith('Unresolved alias') ? message.indexOf('): ') : -1;
  return named < 0 ? message : `${message.slice(0, named + 1)}: a value that starts with * must be quoted`;
}

/**
 * Parses config text: JSON for `.json`, YAML for `.yaml`/`.yml`; otherwise JSON when the first
 * character is `{`, else YAML. A UTF-8 byte order mark is ignored. YAML keys must be unique.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID with the parser's message (path `''`).
 */
export function parseConfigText(text: string, source: string): unknown {
  const body = text.replace(/^\uFEFF/, '');
  const ext = path.extname(source).toLowerCase();
  const asJson = ext === '.json' || (ext !== '.yaml' && ext !== '.yml' && body.trimStart().startsWith('{'));
  if (body.trim() === '') throw invalid(source, [{ path: '', message: 'the file is empty' }]);
  if (asJson) {
    let value: unknown;
    try {
      value = JSON.parse(body) as unknown;
    } catch (err) {
      throw invalid(source, [{ path: '', message: `not valid JSON: ${jsonErrorText((err as Error).message, body)}` }]);
    }
    const bad = structureIssue(value);
    if (bad) throw invalid(source, [{ path: '', message: `not valid JSON: ${bad}` }]);
    return value;
  }
  // yaml is loaded by the first YAML config, not at import (about 15 ms of every start otherwise).
  const { parseDocument, visit } = requireHere('yaml') as typeof import('yaml');
  const doc = parseDocument(body, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0)
    throw invalid(
      source,
      doc.errors.map((e) => ({ path: '', message: `not valid YAML: ${e.message.split('\n')[0].replace(/:$/, '')}` })),
    );
  // A plain scalar YAML reads as a number keeps its text when the number would not write it back
  // (`00123`, `0x1F`, `1.50`, 23 digits): a string field (a header, an env value, an argument)
  // then gets exactly what was written, and a number field checks that text as JSON writes
  // numbers (numberTextIssues), instead of both silently getting 123, 31, 1.5 or 1.2e22.
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'number' && typeof node.source === 'string' && node.source !== String(node.value)) node.value = node.source;
    },
  });
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    throw invalid(source, [{ path: '', message: `not valid YAML: ${yamlErrorText((err as Error).message)}` }]);
  }
  const bad = structureIssue(value);
  if (bad) throw invalid(source, [{ path: '', message: `not valid YAML: ${bad}` }]);
  return value;
}

/** A number as JSON writes one. @see RFC 8259 §6 */
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/**
 * Strings ajv coerced to numbers (`coerceTypes`: YAML and `${VAR}` give strings) that are not
 * written as a JSON number: ajv takes whatever `Number()` reads, so `"0x10"` became 16 and
 * `" 10 "` 10. Compares the value before coercion (`raw`) with it after (`coerced`), same shape.
 */
function numberTextIssues(raw: unknown, coerced: unknown, at: (string | number)[], issues: ConfigIssue[]): void {
  if (typeof raw === 'string') {
    if (typeof coerced === 'number' && !JSON_NUMBER.test(raw))
      issues.push({ path: ptr(at), message: 'must be a number written in decimal (e.g. 10, 1.5, 1e6)' });
    return;
  }
  if (raw === null || typeof raw !== 'object' || coerced === null || typeof coerced !== 'object') return;
  for (const [k, v] of Object.entries(raw)) numberTextIssues(v, (coerced as Record<string, unknown>)[k], [...at, Array.isArray(raw) ? Number(k) : k], issues);
}

const TRUSTED_PEER_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * A `trustProxy` entry fastify's proxy-addr takes at start: a named range, or an address with an
 * optional prefix length (0–32 for IPv4, 0–128 for IPv6). The schema's pattern only looks at the
 * characters, so `999.1.2.3` and `1.2.3.4/99` passed `validate` and then failed the start.
 * @see RFC 4632 §3.1 (IPv4 prefixes); RFC 4291 §2.3 (IPv6 prefixes)
 */
function trustedPeerOk(entry: string): boolean {
  if (TRUSTED_PEER_NAMES.has(entry)) return true;
  const slash = entry.indexOf('/');
  const addr = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(addr);
  if (family === 0) return false;
  if (slash === -1) return true;
  const bits = entry.slice(slash + 1);
  return /^(?:0|[1-9][0-9]{0,2})$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** Deepest nesting of objects and arrays a config file may have (the schema's deepest path is far shallower). */
export const MAX_CONFIG_DEPTH = 64;

/**
 * What makes a parsed document unusable as a config before any schema sees it: a cycle (a YAML
 * alias inside the node it names: `a: &x { b: *x }`), or nesting deeper than MAX_CONFIG_DEPTH.
 * Every later step walks the value recursively, and either would overflow the stack. Walked
 * with an explicit stack; a node an alias shares is visited once per place it appears, which
 * the YAML parser's `maxAliasCount` bounds.
 * @see YAML 1.2.2 §3.2.2.2 (anchors and aliases: a graph, not a tree)
 */
function structureIssue(root: unknown): string | undefined {
  const onPath = new Set<object>();
  const stack: Array<{ v: unknown; depth: number; leaving: boolean }> = [{ v: root, depth: 0, leaving: false }];
  while (stack.length > 0) {
    const { v, depth, leaving } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (leaving) {
      onPath.delete(v);
      continue;
    }
    if (onPath.has(v)) return 'an alias refers to a node that contains it (a cycle)';
    if (depth >= MAX_CONFIG_DEPTH) return `nested deeper than ${MAX_CONFIG_DEPTH} levels`;
    onPath.add(v);
    stack.push({ v, depth, leaving: true });
    for (const child of Object.values(v)) stack.push({ v: child, depth: depth + 1, leaving: false });
  }
  return undefined;
}

/**
 * What an embedder's config value holds that no config file can: a function or a symbol (which
 * `structuredClone` cannot copy, and which failed as a bare `DataCloneError`), or an object that
 * is not a plain object or an array (a `Map`, a `Date`, whose entries the schema never sees, so
 * that a `Map` of keys was served as the embedded demo). Each is named by its path, never quoted.
 * Run after {@link structureIssue}, so the value is acyclic and bounded in depth.
 * @returns one issue per such value, in the order met.
 */
function nonDataIssues(root: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const stack: Array<{ v: unknown; at: (string | number)[] }> = [{ v: root, at: [] }];
  while (stack.length > 0) {
    const { v, at } = stack.pop()!;
    let what: string | undefined;
    if (typeof v === 'function' || typeof v === 'symbol') what = `a ${typeof v}`;
    else if (v !== null && typeof v === 'object') {
      const tag = Object.prototype.toString.call(v).slice(8, -1);
      if (tag !== 'Object' && tag !== 'Array') what = `a ${tag}`;
      else for (const [k, child] of Object.entries(v).reverse()) stack.push({ v: child, at: [...at, Array.isArray(v) ? Number(k) : k] });
    }
    if (what !== undefined)
      issues.push({
        path: ptr(at),
        message: at.length === 0 ? `must be an object, not ${what}` : `must be JSON data (a string, number, boolean, null, array or object), not ${what}`,
      });
  }
  return issues;
}

/** A JSON Pointer into the file as written (RFC 6901; the one escaping, shared with the auth fragments' validators). */
const ptr = jsonPointer;

const VAR_REF = /\$(\$)?\{([^}]*)\}/g;
const VAR_BODY = /^([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([\s\S]*))?$/;

/**
 * Expands `${NAME}`, `${NAME:-default}` and `${NAME:?message}` in every string value (not in
 * keys); `$${` stands for a literal `${`. `${NAME}` with NAME unset is an issue at the value's
 * path; `:-default` applies when NAME is unset or empty; `:?` makes an empty NAME an issue too
 * (as in the shell and Compose: a secret exported empty would otherwise send `Bearer `).
 */
function expand(value: unknown, env: Readonly<Record<string, string | undefined>>, at: (string | number)[], issues: ConfigIssue[], failed: string[]): unknown {
  if (typeof value === 'string') {
    let ok = true;
    const here = ptr(at);
    const out = value.replace(VAR_REF, (whole, escaped: string | undefined, body: string) => {
      if (escaped) return whole.slice(1);
      const m = VAR_BODY.exec(body);
      if (!m) {
        ok = false;
        issues.push({ path: here, message: `bad variable reference \${${body}}: write \${NAME}, \${NAME:-default} or \${NAME:?message}` });
        return whole;
      }
      const v = env[m[1]];
      if (m[2] === '-') return v === undefined || v === '' ? m[3] : v;
      if (m[2] === '?' && (v === undefined || v === '')) {
        ok = false;
        issues.push({ path: here, message: `environment variable ${m[1]} is ${v === undefined ? 'not set' : 'empty'}${m[3] ? `: ${m[3]}` : ''}` });
        return whole;
      }
      if (v === undefined) {
        ok = false;
        issues.push({ path: here, message: `environment variable ${m[1]} is not set (write \${${m[1]}:-default} for a default)` });
        return whole;
      }
      return v;
    });
    if (ok && /\$\{[^}]*$/.test(value.replace(VAR_REF, ''))) {
      ok = false;
      issues.push({ path: here, message: 'unterminated ${ (write $${ for a literal ${)' });
    }
    if (!ok) failed.push(here);
    return out;
  }
  if (Array.isArray(value)) return value.map((v, i) => expand(v, env, [...at, i], issues, failed));
  if (value !== null && typeof value === 'object') {
    // fromEntries defines own keys, so a `__proto__` key stays a key (and is refused as unknown).
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, env, [...at, k], issues, failed)]));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Schema errors, in words.
// ---------------------------------------------------------------------------------------------

function closest(word: string, candidates: readonly string[]): string | undefined {
  const dist = (a: string, b: string): number => {
    const d = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let prev = d[0];
      d[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const cur = d[j];
        d[j] = Math.min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
        prev = cur;
      }
    }
    return d[b.length];
  };
  let best: string | undefined;
  let bestD = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const dd = dist(word, c);
    if (dd < bestD) [best, bestD] = [c, dd];
  }
  return best;
}

/** Schema patterns, in words. */
const PATTERN_WORDS: Readonly<Record<string, string>> = {
  ...HOST_AND_URL_WORDS,
  ...AUTH_PATTERN_WORDS,
  '^[a-zA-Z0-9_-]{1,64}$': 'must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -',
  "^(/(?!(?:\\.|%2[eE]){1,2}(?:/|$))[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$":
    "must be '' or a path like /a/b (no trailing slash, query or fragment, and no . or .. segment, which clients resolve away before they send a request)",
  "^(/(?!(?:\\.|%2[eE]){1,2}(?:/|$))[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$":
    'must be a path like /a/mcp (no trailing slash, query or fragment, and no . or .. segment, which clients resolve away before they send a request)',
  '^[A-Za-z_][A-Za-z0-9_]*$': 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)',
  "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$": 'must be an HTTP header name (an RFC 9110 token)',
  '^[^\\r\\n\\u0000]*$': 'must not contain CR, LF or NUL',
  '^[A-Za-z0-9_.-]{1,16}$': 'must be 1 to 16 characters of A-Z, a-z, 0-9, _, . and -',
  '^(loopback|linklocal|uniquelocal|[0-9A-Fa-f:.]+(/[0-9]{1,3})?)$': TRUSTED_PEER_MESSAGE,
  '^[hH][tT][tT][pP][sS]?://[^/?#@\\s*]+/?$':
    'must be an origin as browsers send it: http:// or https://, a host and an optional port, no path (e.g. https://app.example)',
};

/** What a `$schema` that is not a string is told. */
const SCHEMA_REF_MESSAGE = 'must be a string: the URI or path of the config schema, for editors';

/** What a `cluster.key` too short to hold one key is told. */
const CLUSTER_KEY_MESSAGE = 'must be 32 random bytes in base64 (43 characters or more), e.g. made with `openssl rand -base64 32`';

function describeAjvError(e: ErrorObject): ConfigIssue | undefined {
  const p = e.params as Record<string, unknown>;
  if (e.instancePath === '/cluster/key' && e.keyword === 'minLength') return { path: e.instancePath, message: CLUSTER_KEY_MESSAGE };
  switch (e.keyword) {
    case 'if':
      return undefined;
    case 'required':
      // The alternatives of anyOf/oneOf are reported once, by their own keyword.
      if (/\/(anyOf|oneOf)\/\d+\/required$/.test(e.schemaPath)) return undefined;
      return { path: `${e.instancePath}/${p.missingProperty as string}`, message: 'is required' };
    case 'additionalProperties': {
      const key = p.additionalProperty as string;
      const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const hint = closest(key, known);
      return { path: `${e.instancePath}${ptr([key])}`, message: `is not a known key${hint ? ` (did you mean \`${hint}\`?)` : ''}` };
    }
    case 'propertyNames':
      return undefined; // the nested pattern error names the key
    case 'pattern': {
      const what = PATTERN_WORDS[p.pattern as string] ?? `must match ${p.pattern as string}`;
      if (e.propertyName !== undefined) return { path: `${e.instancePath}${ptr([e.propertyName])}`, message: `is not a valid name: ${what}` };
      return { path: e.instancePath, message: what };
    }
    case 'format':
      return { path: e.instancePath, message: p.format === 'uri' ? 'must be an absolute URL' : (e.message ?? 'is invalid') };
    case 'enum':
      return { path: e.instancePath, message: `must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}` };
    case 'false schema': {
      if (e.schemaPath.includes('/dependentSchemas/none/')) return { path: e.instancePath, message: '`none: true` excludes `bearer` and `apiKeys`' };
      const stdio = e.schemaPath.includes('/dependentSchemas/command/');
      return {
        path: e.instancePath,
        message: stdio ? 'is not allowed on a stdio upstream (one with `command`)' : 'is not allowed on an HTTP upstream (one with `url`)',
      };
    }
    case 'anyOf':
      if (e.parentSchema?.dependentSchemas !== undefined)
        return { path: e.instancePath, message: 'needs `command` (a stdio upstream), `url` (an HTTP upstream) or `transport: embedded` (the demo server)' };
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
    case 'not':
      if (e.schemaPath === '#/not') return { path: '', message: 'has both `upstreams` and `mcpServers`; use one' };
      if (e.schemaPath === '#/properties/trustProxy/not')
        return { path: e.instancePath, message: 'must be false, a hop count or a list of addresses (true would trust every peer)' };
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
    case 'minProperties': {
      if (e.instancePath === '/upstreams' || e.instancePath === '/mcpServers') return { path: e.instancePath, message: 'must name at least one upstream' };
      // An object that must set one of its keys (`auth`, an upstream's `credentials`) names them;
      // a map (a `headers` one) needs an entry. It read "must name at least one upstream" for all.
      const keys = Object.keys((e.parentSchema?.properties ?? {}) as Record<string, unknown>);
      return {
        path: e.instancePath,
        message: keys.length > 0 ? `must set at least one of ${keys.map((k) => `\`${k}\``).join(', ')}` : 'must have at least one entry',
      };
    }
    default:
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
  }
}

// ---------------------------------------------------------------------------------------------
// Normalization and the checks the schema cannot express.
// ---------------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What a value that is not an object is (`a string`, `null`, `an array`, `undefined`), never the value itself. */
function kindOf(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

/** Headers Switchyard sets itself on each outbound request; a mount may not fix them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'last-event-id',
]);

/** The identity and policy keys an upstream entry carries through normalization as written (defaults applied). */
const IDENTITY_KEYS = ['auth', 'policy', 'rateLimits', 'tools', 'prompts', 'resources', 'validateArguments'] as const;

/** The keys of `o` among `keys` that are present. */
function pick(o: Obj, keys: readonly string[]): Obj {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}

const SIBLING = (mcpPath: string, leaf: string): string => mcpPath.replace(/\/[^/]*$/, '') + '/' + leaf;

/**
 * A bind host as the listener is given it: `localhost.` (any case) without its dot, the rest as
 * written. It is the same name (RFC 1034 §3.1) and loopback by definition (RFC 6761 §6.3), but
 * hosts files list `localhost` without the dot, so a resolver that sends `localhost.` to DNS
 * instead would fail the bind (or, from a wrong answer, bind elsewhere than loopback).
 */
function bindHostOf(host: unknown): unknown {
  return typeof host === 'string' && /^localhost\.$/i.test(host) ? host.slice(0, -1) : host;
}

/**
 * The admin listener of a schema-checked value: `false`, or its host, port and per-address
 * connection cap (defaults from the schema). `true` is refused (write `{}` for the defaults), and so is the MCP listener's own
 * address: the admin listener has no authentication and never shares the MCP port.
 */
function adminOf(value: Obj, issues: ConfigIssue[]): AdminConfig | false {
  const a = value.admin;
  if (a === false) return false;
  if (!isObj(a)) {
    if (a === true) issues.push({ path: ptr(['admin']), message: 'must be an object (`{}` for 127.0.0.1:7601) or false' });
    return false;
  }
  const admin = { host: bindHostOf(a.host) as string, port: a.port as number, maxConnectionsPerAddress: a.maxConnectionsPerAddress as number };
  const listen = isObj(value.listen) ? value.listen : {};
  const listenHost = bindHostOf(listen.host);
  const wildcard = (h: unknown) => h === '0.0.0.0' || h === '::' || h === '[::]';
  if (admin.port !== 0 && admin.port === listen.port && (admin.host === listenHost || wildcard(admin.host) || wildcard(listenHost)))
    issues.push({
      path: ptr(['admin', 'port']),
      message: `is the MCP listener's port (${admin.port}); the admin listener needs its own: another admin.port (--admin-port; 0 picks a free one), or admin: false (--no-admin)`,
    });
  return admin;
}

/**
 * Duplicate API keys in an `auth` at `at`: names and hashes (any case) must be unique, as the key
 * store requires (src/auth/api-keys.ts), so that `validate` and `createSwitchyard` refuse them
 * with the other config errors instead of the start.
 */
function apiKeyIssues(auth: unknown, at: readonly (string | number)[], issues: ConfigIssue[]): void {
  if (!isObj(auth) || !Array.isArray(auth.apiKeys)) return;
  const names = new Map<string, number>();
  const hashes = new Map<string, number>();
  auth.apiKeys.forEach((k: unknown, i) => {
    if (!isObj(k)) return;
    const seen = (map: Map<string, number>, key: unknown, field: string, what: string) => {
      if (typeof key !== 'string') return;
      const first = map.get(key);
      if (first === undefined) map.set(key, i);
      else issues.push({ path: ptr([...at, 'apiKeys', i, field]), message: `duplicate ${what} (also ${ptr([...at, 'apiKeys', first, field])})` });
    };
    seen(names, k.name, 'name', `name ${String(k.name)}`);
    seen(hashes, typeof k.sha256 === 'string' ? k.sha256.toLowerCase() : undefined, 'sha256', 'key');
  });
}

/**
 * Normalizes a schema-valid value (defaults applied) and runs the cross-field checks. `raw` is
 * the value as written (after `${VAR}`), to tell written keys from defaults.
 */
/** What pinned era 2024-11-05 and what probes instead, in the words of each way of configuring Switchyard (ValidateOptions.writtenAs). */
const ERA_SETTING_WORDS = {
  file: { written: 'era: 2024-11-05', streamable: 'era: auto' },
  flags: { written: '--upstream-era 2024-11-05', streamable: '--upstream-era auto' },
  options: { written: "upstreamEra: '2024-11-05'", streamable: "upstreamEra: 'auto'" },
} as const;

/**
 * How upstream entry `written` (as the operator wrote it) pinned era 2024-11-05, in those words,
 * with what the same setting says for Streamable HTTP: the `type` or `transport` key that says
 * `sse`, else the era setting in the words of `writtenAs` (a file's `era`, `--upstream-era`, or
 * the library option `upstreamEra`).
 */
function sseSettingOf(written: Obj, writtenAs: keyof typeof ERA_SETTING_WORDS): { written: string; streamable: string } {
  const key = written.type === 'sse' ? 'type' : written.transport === 'sse' ? 'transport' : undefined;
  if (key) return { written: `${key}: sse`, streamable: `${key}: http` };
  return ERA_SETTING_WORDS[writtenAs];
}

function normalize(value: Obj, raw: Obj, baseDir: string, issues: ConfigIssue[], writtenAs: keyof typeof ERA_SETTING_WORDS, environment = true): FrozenConfig {
  const mapKey = 'mcpServers' in value && !('upstreams' in value) ? 'mcpServers' : 'upstreams';
  const entries = isObj(value[mapKey]) ? Object.entries(value[mapKey]) : [];
  const rawMap = isObj(raw[mapKey]) ? raw[mapKey] : {};
  // On a value that failed the schema, checks run only where the shapes they read are sound.
  const topDialects = value.dialects as DialectSwitches;
  const dialectsSound = (d: unknown): d is DialectSwitches => isObj(d) && ['modern', 'streamable', 'legacySse'].every((k) => typeof d[k] === 'boolean');
  const topLimits = value.limits as Limits;
  const upstreams: Record<string, UpstreamConfig> = {};
  const disabled = new Set<string>();

  for (const [name, u] of entries) {
    if (!isObj(u)) continue;
    const at = (...k: string[]) => ptr([mapKey, name, ...k]);
    const written = isObj(rawMap[name]) ? rawMap[name] : {};
    if (u.disabled === true) {
      disabled.add(name);
      continue;
    }
    if ('command' in written && 'url' in written) {
      issues.push({ path: ptr([mapKey, name]), message: 'has both `command` (stdio) and `url` (HTTP); keep one' });
      continue;
    }
    const isStdio = typeof u.command === 'string';
    const isEmbedded = u.transport === 'embedded' || u.type === 'embedded';
    const declared = [u.transport, u.type].filter((t): t is string => typeof t === 'string');
    if (typeof u.transport === 'string' && typeof u.type === 'string' && u.transport !== u.type)
      issues.push({ path: at('type'), message: `says \`${u.type}\` but \`transport\` says \`${u.transport}\`` });
    for (const t of declared) {
      const key = u.transport === t ? 'transport' : 'type';
      if (t === 'embedded' && (isStdio || typeof u.url === 'string'))
        issues.push({ path: at(key), message: '`embedded` is the built-in demo server: drop `command` and `url`' });
      else if (t === 'stdio' && !isStdio)
        issues.push({ path: at(key), message: typeof u.url === 'string' ? '`stdio` needs `command`, not `url`' : '`stdio` needs `command`' });
      else if (t !== 'stdio' && t !== 'embedded' && isStdio) issues.push({ path: at(key), message: `\`${t}\` needs \`url\`, not \`command\`` });
    }
    let era = u.era as UpstreamEra;
    if (declared.includes('sse')) {
      if ('era' in written && written.era !== '2024-11-05')
        issues.push({ path: at('era'), message: '`sse` (HTTP+SSE) is era 2024-11-05; drop `era` or set it to 2024-11-05' });
      era = '2024-11-05';
    }
    const dialects: DialectSwitches = { ...topDialects, ...(u.dialects as Partial<DialectSwitches> | undefined) };
    if (dialectsSound(dialects) && !dialects.modern && !dialects.streamable && !dialects.legacySse)
      issues.push({ path: at('dialects'), message: 'turns every dialect off; keep at least one of modern, streamable, legacySse' });
    apiKeyIssues(u.auth, [mapKey, name, 'auth'], issues);
    const common = {
      name,
      path: typeof u.path === 'string' ? u.path : `/${name}/mcp`,
      optional: u.optional === true,
      dialects,
      limits: { ...topLimits, ...(u.limits as Partial<Limits> | undefined) },
      ...(typeof u.description === 'string' ? { description: u.description } : {}),
      ...pick(u, IDENTITY_KEYS),
    };
    if (isObj(u.credentials)) {
      if (isEmbedded || (!isStdio && typeof u.url !== 'string')) issues.push({ path: at('credentials'), message: 'is for HTTP upstreams (ones with `url`)' });
      // 2025-11-25 basic/authorization, Token Passthrough: a credential of its own, or the client's, never both.
      if (u.forwardAuthorization === true) issues.push({ path: at('credentials'), message: 'conflicts with `forwardAuthorization: true`; use one' });
      for (const h of Object.keys(isObj(u.headers) ? u.headers : {}))
        if (h.toLowerCase() === 'authorization')
          issues.push({ path: at('headers', h), message: 'conflicts with `credentials`; put it in `credentials.headers`' });
    }
    if (isEmbedded) {
      // The demo runs in the process and speaks every era: keys of a child or a connection would be dropped without a word.
      for (const k of EMBEDDED_REFUSED) if (k in written) issues.push({ path: at(k), message: 'is for stdio or HTTP upstreams; the embedded demo takes none' });
      if (!isStdio && typeof u.url !== 'string') upstreams[name] = { ...common, transport: 'embedded' };
    } else if (isStdio) {
      // A child is one process shared by every client, in the one era found at its start (or pinned).
      if (era === 'match-client')
        issues.push({ path: at('era'), message: '`match-client` needs an HTTP upstream: a stdio child is one connection, in one era' });
      upstreams[name] = {
        ...common,
        transport: 'stdio',
        command: u.command as string,
        args: u.args as string[],
        env: u.env as Record<string, string>,
        era,
        ...(typeof u.cwd === 'string' ? { cwd: path.resolve(baseDir, u.cwd) } : {}),
      };
    } else if (typeof u.url === 'string') {
      const headers = (u.headers ?? {}) as Record<string, string>;
      for (const h of Object.keys(headers)) {
        if (RESERVED_HEADERS.has(h.toLowerCase())) issues.push({ path: at('headers', h), message: 'is set by Switchyard on each request; remove it' });
        // 2025-11-25 basic/security_best_practices, Token Passthrough: the client's token is never forwarded unless the mount says so.
        if (h.toLowerCase() === 'authorization' && u.forwardAuthorization === true)
          issues.push({ path: at('headers', h), message: 'conflicts with `forwardAuthorization: true`; use one' });
      }
      upstreams[name] = {
        ...common,
        transport: 'http',
        url: u.url,
        headers,
        era,
        ...(era === '2024-11-05' ? { sseSetting: sseSettingOf(written, writtenAs) } : {}),
        isolation: u.isolation as Isolation,
        forwardAuthorization: u.forwardAuthorization as boolean,
        ...(isObj(u.credentials) ? { credentials: u.credentials as OutboundConfig } : {}),
      };
    }
  }
  if (entries.length > 0 && disabled.size === entries.length) issues.push({ path: ptr([mapKey]), message: 'every upstream is disabled' });
  // No upstreams at all: the embedded demo at /mcp, as `npm start` serves it.
  if (entries.length === 0 && dialectsSound(topDialects))
    upstreams.default = { name: 'default', path: '/mcp', optional: false, dialects: topDialects, limits: topLimits, transport: 'embedded' };

  let aggregate: AggregateConfig | undefined;
  if (isObj(value.aggregate)) {
    const a = value.aggregate;
    const names = Array.isArray(a.upstreams) ? (a.upstreams as string[]) : Object.keys(upstreams);
    const separator = a.separator as string;
    names.forEach((n, i) => {
      const at = ptr(['aggregate', 'upstreams', i]);
      if (disabled.has(n)) issues.push({ path: at, message: `upstream ${n} is disabled` });
      else if (!entries.some(([k]) => k === n)) issues.push({ path: at, message: `no upstream is named ${n}` });
    });
    // The aggregate mount is named `aggregate` (logs, metrics, reload reports, ctx.mount): an
    // upstream of that name beside it would be two mounts with one name (docs/config.md).
    if (entries.some(([k]) => k === 'aggregate'))
      issues.push({
        path: ptr([mapKey, 'aggregate']),
        message: 'is the name of the aggregate mount (in logs, metrics and reload reports); rename this upstream (or drop the top-level `aggregate`)',
      });
    // The aggregate mount authenticates with the top-level `auth`: a member's own would be bypassed there.
    names.forEach((n) => {
      const u = (value[mapKey] as Obj | undefined)?.[n];
      if (isObj(u) && u.auth !== undefined)
        issues.push({
          path: ptr([mapKey, n, 'auth']),
          message: 'cannot be set on an upstream of the aggregate mount (it uses the top-level `auth`); move it to the top level',
        });
    });
    // A prefixed name is split at the separator's first occurrence (src/upstreams/aggregate.ts):
    // a member name must not contain it, nor end in its start (`x_` + `__` + `t` splits at `x`).
    for (const n of names)
      if (typeof n === 'string' && n !== '' && typeof separator === 'string' && !prefixSplitsBack(n, separator)) {
        const example = `${n}${separator}tool`;
        const at = example.indexOf(separator);
        const split = `${example} splits as ${example.slice(0, at)} and ${example.slice(at + separator.length)}`;
        issues.push({
          path: ptr(['aggregate', 'separator']),
          message: n.includes(separator)
            ? `occurs in upstream name ${n}, so prefixed names would be ambiguous`
            : `overlaps the end of upstream name ${n} (${split}), so prefixed names would be ambiguous`,
        });
      }
    if (dialectsSound(topDialects) && !topDialects.modern && !topDialects.streamable && !topDialects.legacySse)
      issues.push({ path: ptr(['dialects']), message: 'turns every dialect off for the aggregate mount; keep at least one' });
    aggregate = { path: a.path as string, upstreams: names.filter((n) => n in upstreams), separator };
  }

  apiKeyIssues(value.auth, ['auth'], issues);
  corsIssues(value.cors, value.allowedOrigins, issues);
  const config: FrozenConfig = {
    listen: (isObj(value.listen) ? { ...value.listen, host: bindHostOf(value.listen.host) } : value.listen) as ListenConfig,
    dialects: topDialects,
    allowedOrigins: value.allowedOrigins as string[],
    allowedHosts: value.allowedHosts as string[],
    ...(isObj(value.cors) ? { cors: value.cors as unknown as CorsConfig } : {}),
    trustProxy: value.trustProxy as FrozenConfig['trustProxy'],
    ...(typeof value.publicBaseUrl === 'string' ? { publicBaseUrl: value.publicBaseUrl } : {}),
    logLevel: value.logLevel as FrozenConfig['logLevel'],
    limits: topLimits,
    ...(typeof value.requestStateKey === 'string' ? { requestStateKey: value.requestStateKey } : {}),
    strict: value.strict as FrozenConfig['strict'],
    cache: value.cache as CacheConfig,
    listCache: value.listCache as ListCacheConfig,
    upstreams,
    ...(aggregate ? { aggregate } : {}),
    ...pick(value, ['auth', 'policy', 'rateLimits']),
    admin: adminOf(value, issues),
    requireUpstreams: value.requireUpstreams === true,
    accessLogLevel: value.accessLogLevel as AccessLogLevel,
    ...(isObj(value.cluster) ? { cluster: clusterOf(value.cluster, issues, environment) } : {}),
  };

  // Every path a mount serves must be its own (checked once the paths themselves are sound).
  const owner = new Map<string, string>();
  const pathsSound = isObj(value.listen) && typeof value.listen.path === 'string' && isObj(topDialects) && (!aggregate || typeof aggregate.path === 'string');
  for (const m of pathsSound ? listMounts(config) : []) {
    const where = m.upstream === undefined ? ptr(['aggregate', 'path']) : ptr([mapKey, m.upstream, 'path']);
    for (const p of [m.mcpPath, m.ssePath, m.messagesPath]) {
      if (p === undefined) continue;
      const prev = owner.get(p);
      if (prev !== undefined) issues.push({ path: where, message: `${p} is already served by ${prev}` });
      else owner.set(p, m.upstream === undefined ? 'the aggregate mount' : `upstream ${m.upstream}`);
    }
  }
  return config;
}

/**
 * The checks of `cors.origins` the schema cannot make: each must be a serialized origin exactly as
 * browsers send it (`HTTPS://App.example:443/` is named with the form to give, since the header
 * is compared as it arrives), and one that `allowedOrigins` lets through: CORS grants the pages
 * of allowed origins their answers, it never widens that allowlist (docs/security.md, "CORS").
 * An allowlist entry matches as the Origin check matches it (src/transports/origin.ts): the same
 * host, case and one trailing dot aside, and the same port when the entry pins one (the scheme's
 * default when the origin names none). The listener compiles the same list again with that check
 * itself (src/transports/cors.ts), so a start never serves what this missed.
 * @see RFC 6454 §6.2, §7; WHATWG Fetch §3.2.3
 */
function corsIssues(cors: unknown, allowedOrigins: unknown, issues: ConfigIssue[]): void {
  if (!isObj(cors) || !Array.isArray(cors.origins)) return;
  const allow = Array.isArray(allowedOrigins) ? allowedOrigins.filter((e): e is string => typeof e === 'string') : [];
  const entries = allow.map((e) => {
    const u = URL.parse(`http://${e.trim()}`);
    const port = /:(\d+)$/.exec(e.trim())?.[1];
    return u ? { host: u.hostname.toLowerCase().replace(/\.$/, ''), port: port === undefined ? undefined : Number(port) } : undefined;
  });
  cors.origins.forEach((origin: unknown, i) => {
    if (typeof origin !== 'string') return;
    const at = ptr(['cors', 'origins', i]);
    // The schema's pattern names what is expected of one it refuses; one with a lone trailing `/`
    // passes it, and is told the form to give here (serializedOrigin).
    if (!/^[hH][tT][tT][pP][sS]?:\/\/[^/?#@\s*]+\/?$/.test(origin)) return;
    const form = serializedOrigin(origin);
    if (form === false) return;
    if (form !== true) {
      issues.push({ path: at, message: `must be the origin as browsers send it: give ${form}` });
      return;
    }
    const u = new URL(origin);
    const host = u.hostname.replace(/\.$/, '');
    const port = u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
    if (!entries.some((e) => e !== undefined && e.host === host && (e.port === undefined || e.port === port)))
      issues.push({
        path: at,
        message: `is not allowed by allowedOrigins (add ${u.host.includes(':') && !u.host.endsWith(']') ? u.host : `${u.host}:${port}`} there): CORS never widens the Origin allowlist`,
      });
  });
}

/**
 * What node-redis's `parseURL` would throw on in a `cluster.redis` URL the pattern admits: a user
 * name or password that is not valid percent-encoding (it decodes them with `decodeURIComponent`),
 * or a path that is not a database number. Without this check such a URL passed `switchyard
 * validate` and then stopped the start with a bare `URIError: URI malformed`. The message never
 * repeats the URL (its password).
 */
function redisUrlFault(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined; // the pattern's own message covers what is not a URL
  }
  for (const [part, value] of [
    ['user name', u.username],
    ['password', u.password],
  ] as const) {
    try {
      decodeURIComponent(value);
    } catch {
      return `has a ${part} that is not valid percent-encoding (write % as %25)`;
    }
  }
  if (u.pathname.length > 1 && Number.isNaN(Number(u.pathname.slice(1)))) return 'has a path that is not a database number (e.g. redis://redis:6379/0)';
  return undefined;
}

/** The `cluster` section: every replica must open what the others sealed, so Redis needs a shared key. */
function clusterOf(c: Obj, issues: ConfigIssue[], environment: boolean): ClusterConfig {
  // The library reads no environment: there, naming SWITCHYARD_CLUSTER_KEY sent the embedder to a variable never read.
  const how = environment ? 'set SWITCHYARD_CLUSTER_KEY: openssl rand -base64 32' : 'a base64 key of 32 random bytes: openssl rand -base64 32';
  if (typeof c.redis === 'string' && typeof c.key !== 'string')
    issues.push({ path: ptr(['cluster', 'key']), message: `is required with cluster.redis (${how})` });
  const redisFault = typeof c.redis === 'string' ? redisUrlFault(c.redis) : undefined;
  if (redisFault !== undefined) issues.push({ path: ptr(['cluster', 'redis']), message: redisFault });
  return {
    ...(typeof c.redis === 'string' ? { redis: c.redis } : {}),
    ...(typeof c.key === 'string' ? { key: c.key } : {}),
    ...(typeof c.replicaId === 'string' ? { replicaId: c.replicaId } : {}),
    sessionMaxAgeMs: c.sessionMaxAgeMs as number,
    readinessRequiresRedis: c.readinessRequiresRedis === true,
  };
}

// ---------------------------------------------------------------------------------------------
// Public API.
// ---------------------------------------------------------------------------------------------

/** One HTTP mount the config asks for, with its full paths (`listen.path` included). */
export interface Mount {
  /** The upstream it serves; undefined for the aggregate mount. */
  readonly upstream: string | undefined;
  /** Upstreams served: one, or the aggregate's list. */
  readonly upstreams: readonly string[];
  /** The MCP endpoint path. */
  readonly mcpPath: string;
  /** HTTP+SSE stream path (`sse` beside the MCP path) when `dialects.legacySse` is on. */
  readonly ssePath: string | undefined;
  /** HTTP+SSE POST path (`messages` beside the MCP path) when `dialects.legacySse` is on. */
  readonly messagesPath: string | undefined;
  readonly dialects: DialectSwitches;
  readonly limits: Readonly<Limits>;
}

/**
 * The mounts of a config: one per upstream (file order), then the aggregate mount if any. Paths
 * are `listen.path` + the mount path; the HTTP+SSE paths are siblings of the MCP path
 * (`/a/mcp` → `/a/sse`, `/a/messages`), present only when the mount serves 2024-11-05.
 */
export function listMounts(config: FrozenConfig): Mount[] {
  const prefix = config.listen.path;
  const mount = (upstream: string | undefined, upstreams: readonly string[], p: string, dialects: DialectSwitches, limits: Readonly<Limits>): Mount => ({
    upstream,
    upstreams,
    mcpPath: prefix + p,
    ssePath: dialects.legacySse ? prefix + SIBLING(p, 'sse') : undefined,
    messagesPath: dialects.legacySse ? prefix + SIBLING(p, 'messages') : undefined,
    dialects,
    limits,
  });
  const out = Object.values(config.upstreams).map((u) => mount(u.name, [u.name], u.path, u.dialects, u.limits));
  if (config.aggregate) out.push(mount(undefined, config.aggregate.upstreams, config.aggregate.path, config.dialects, config.limits));
  return out;
}

/**
 * Validates a parsed config value (the Switchyard shape or the `mcpServers` shape) and returns
 * it normalized and deep-frozen. Steps: `${VAR}` expansion from `opts.env`, schema validation
 * with defaults, cross-field checks (transport keys, aggregate names, path collisions, at least
 * one dialect per mount), normalization (see {@link FrozenConfig}). The input is not modified.
 * @param value what the file held (JSON/YAML data).
 * @param source a label for messages, normally the file path.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID, `data: { source, errors: ConfigIssue[] }`
 *   listing every failing path (JSON Pointers into the file as written).
 */
export function validateConfig(value: unknown, source: string, opts: ValidateOptions = {}): FrozenConfig {
  // An embedder's object may be cyclic or too deep as a parsed file may (see parseConfigText).
  const bad = structureIssue(value);
  if (bad) throw invalid(source, [{ path: '', message: bad }], undefined, opts.whole);
  // Only a value passed in code can hold these; a parsed file never does.
  const notData = nonDataIssues(value);
  if (notData.length > 0) throw invalid(source, notData, undefined, opts.whole);
  const issues: ConfigIssue[] = [];
  const failedVars: string[] = [];
  // Checked before the flags are laid over it: a file that is a scalar, a list or null would
  // otherwise give way to the flags' object, and the gateway would start on the embedded demo.
  // A file's mapping, or (for a caller who passed a value) an object: what it got is named, never quoted.
  const notObject = opts.whole === undefined ? 'must be an object (a YAML mapping)' : `must be an object, not ${kindOf(value)}`;
  if (!isObj(value)) throw invalid(source, [{ path: '', message: notObject }], undefined, opts.whole);
  let expanded = opts.expandEnv === false ? structuredClone(value) : expand(value, opts.env ?? process.env, [], issues, failedVars);
  if (opts.overrides) expanded = overlay(expanded, opts.overrides);
  const raw = structuredClone(expanded);
  if (!isObj(expanded)) throw invalid(source, [{ path: '', message: notObject }], undefined, opts.whole);
  // `$schema` is for editors, which read it as written: there a number, boolean or null is an
  // error, so it is not coerced to a string as other scalars are (the schema says `type: string`).
  const schemaRefBad = '$schema' in expanded && typeof expanded.$schema !== 'string';
  if (schemaRefBad) issues.push({ path: ptr(['$schema']), message: SCHEMA_REF_MESSAGE });
  const validate = validator();
  const valid = validate(expanded);
  const under = (p: string, roots: readonly string[]) => roots.some((r) => p === r || p.startsWith(r + '/'));
  // Upstreams holding both command and url get one message, not one per refused key.
  const both = Object.entries(isObj(raw) ? raw : {})
    .filter(([k, m]) => (k === 'upstreams' || k === 'mcpServers') && isObj(m))
    .flatMap(([k, m]) =>
      Object.entries(m as Obj)
        .filter(([, u]) => isObj(u) && 'command' in u && 'url' in u)
        .map(([n]) => ptr([k, n])),
    );
  if (!valid) {
    for (const e of validate.errors ?? []) {
      const d = describeAjvError(e);
      // A value whose ${VAR} failed gets no schema error of its own (its key still may).
      if (!d || (under(d.path, failedVars) && e.propertyName === undefined)) continue;
      if (e.keyword === 'false schema' && under(d.path, both)) continue;
      if (schemaRefBad && d.path === ptr(['$schema'])) continue;
      issues.push(d);
    }
  }
  numberTextIssues(raw, expanded, [], issues);
  if (Array.isArray(expanded.trustProxy))
    expanded.trustProxy.forEach((entry, i) => {
      if (typeof entry === 'string' && !trustedPeerOk(entry)) issues.push({ path: ptr(['trustProxy', i]), message: TRUSTED_PEER_MESSAGE });
    });
  const config = normalize(expanded, raw as Obj, opts.baseDir ?? process.cwd(), issues, opts.writtenAs ?? 'file', opts.environment);
  // A refused config is not assembled, where its policy is compiled: its policy errors would show only on the next run.
  if (issues.length > 0) issues.push(...policyIssues(expanded, issues, opts.checkRules));
  const seen = new Set<string>();
  const unique = issues.filter((i) => !seen.has(i.path + '\0' + i.message) && seen.add(i.path + '\0' + i.message));
  unique.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (unique.length > 0) throw invalid(source, unique, undefined, opts.whole);
  const frozen = deepFreeze(config);
  if ('mcpServers' in expanded && !('upstreams' in expanded)) fromMcpServers.add(frozen);
  return frozen;
}

/** The configs {@link validateConfig} made from an `mcpServers` map (their `upstreams` are that map, normalized). */
const fromMcpServers = new WeakSet<FrozenConfig>();

/**
 * A JSON Pointer into normalized `config` (where the upstreams are `/upstreams/NAME`) as the
 * config's own file or value has it: `/mcpServers/NAME/…` for one written with `mcpServers`, else
 * as given. The one mapping back from the normalized config: checks that run on it (the policy
 * wiring, src/policy/wire.ts) name the normalized paths. Upstream names are kept by normalization.
 * @param pointer a JSON Pointer (RFC 6901), or text (a message) in which pointers are preceded
 *   by the start, a space or `(`.
 */
function writtenPath(config: FrozenConfig, pointer: string): string {
  return fromMcpServers.has(config) ? pointer.replace(/(^|[\s(])\/upstreams(?=\/|$)/g, '$1/mcpServers') : pointer;
}

/**
 * `err` of a check run on normalized `config`, with every path as the config's file has it
 * ({@link writtenPath}): for an SWY_ERR_CONFIG_INVALID with `data.errors`, a copy of it whose
 * issues' paths, the pointers their messages name, and its message are mapped back (code,
 * `data.source` and cause kept). Anything else is returned as it is.
 */
export function inFileTerms(config: FrozenConfig, err: unknown): unknown {
  if (!fromMcpServers.has(config) || !(err instanceof SwitchyardError) || err.code !== 'SWY_ERR_CONFIG_INVALID' || !Array.isArray(err.data?.errors)) return err;
  const errors = (err.data.errors as ConfigIssue[]).map((i) => ({ ...i, path: writtenPath(config, i.path), message: writtenPath(config, i.message) }));
  return new SwitchyardError(err.code, { message: writtenPath(config, err.message), data: { ...err.data, errors }, cause: err.cause });
}

/**
 * The policy errors of a refused config, which is not assembled (where they are found for a
 * config that passes, src/policy/wire.ts): the CEL errors and duplicate names of the rules of
 * the top-level `policy` and each enabled upstream's (with {@link ValidateOptions.checkRules}),
 * duplicate limit names of each `rateLimits`, and two renames to one name in an upstream's
 * `tools` or `prompts`; upstreams under `upstreams` or `mcpServers` as written. Only what is
 * well-formed enough is looked at: a list or map the schema refused as a whole (not a list, too
 * many entries) is left out, and so is an entry that is not an object, or whose checked value
 * (`when`, `name`, the target of a rename) has the wrong type or an issue of its own.
 * @param config the config after expansion, coercion and defaults.
 * @param issues the issues found so far.
 */
function policyIssues(config: Obj, issues: readonly ConfigIssue[], checkRules: ValidateOptions['checkRules']): ConfigIssue[] {
  // One pass over the issues: each path, and each pointer it lies under, for the look-ups below.
  const paths = new Set<string>();
  const above = new Set<string>();
  for (const { path: p } of issues) {
    paths.add(p);
    for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) above.add(p.slice(0, i));
  }
  const refused = (p: string) => paths.has(p) || above.has(p);
  const whole = (p: string) => paths.has(p);
  const places: Array<[Obj, string]> = [[config, '']];
  for (const key of ['upstreams', 'mcpServers']) {
    const map = config[key];
    if (!isObj(map)) continue;
    for (const [name, u] of Object.entries(map)) if (isObj(u) && u.disabled !== true) places.push([u, ptr([key, name])]);
  }
  const out: ConfigIssue[] = [];
  for (const [at, base] of places) {
    const policy = at.policy;
    const rulesAt = `${base}/policy/rules`;
    if (checkRules && isObj(policy) && Array.isArray(policy.rules) && !whole(rulesAt)) {
      const rules = policy.rules.map((r: unknown, i) =>
        isObj(r) && typeof r.when === 'string' && !refused(`${rulesAt}/${i}/when`) ? { name: r.name, effect: r.effect, when: r.when } : undefined,
      );
      out.push(...checkRules(rules, `${base}/policy`));
    }
    const limitsAt = `${base}/rateLimits`;
    if (Array.isArray(at.rateLimits) && !whole(limitsAt))
      out.push(
        ...duplicateLimitNames(
          at.rateLimits.map((l: unknown, i) => (refused(`${limitsAt}/${i}/name`) ? undefined : l)),
          limitsAt,
        ),
      );
    if (base === '') continue;
    for (const kind of ['tools', 'prompts']) {
      const rename = isObj(at[kind]) ? at[kind].rename : undefined;
      const renameAt = `${base}/${kind}/rename`;
      if (!isObj(rename) || whole(renameAt)) continue;
      out.push(
        ...renameConflicts(Object.fromEntries(Object.entries(rename).filter(([from]) => !refused(`${renameAt}/${ptr([from]).slice(1)}`))), `${base}/${kind}`),
      );
    }
  }
  return out;
}

/** Whether a parsed file sets a `policy`, at the top or in an upstream. */
function hasPolicy(value: unknown): boolean {
  if (!isObj(value)) return false;
  if ('policy' in value) return true;
  return ['upstreams', 'mcpServers'].some((k) => isObj(value[k]) && Object.values(value[k]).some((u) => isObj(u) && 'policy' in u));
}

/** Largest config file read, bytes (4 MiB): a config is a few KiB; a path naming a device or a huge file is refused, not read whole. */
export const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024;

/**
 * The file's text (UTF-8, invalid sequences replaced as `readFile(file, 'utf8')` does), or
 * undefined when it holds more than `max` bytes: at most `max` + 1 bytes are read, whatever the
 * file is (a FIFO, `/dev/zero`).
 * @throws the file system's error (ENOENT, EISDIR, EACCES, …)
 */
async function readAtMost(file: string, max: number): Promise<string | undefined> {
  const fh = await open(file, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(64 * 1024, max + 1 - total));
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
      if (total > max) return undefined;
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    await fh.close();
  }
}

/**
 * Reads a config file's text (UTF-8), at most {@link MAX_CONFIG_FILE_BYTES} bytes, so that a huge
 * file or a device such as `/dev/zero` is refused instead of read without end. Used by
 * {@link loadConfig} (`switchyard validate`) and by the gateway's own start and reloads.
 * @param file path of the config file.
 * @returns the file's text.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID (path `''`) when the file cannot be read
 *   (`cannot read the file: ENOENT`, …) or is larger than the bound.
 */
export async function readConfigText(file: string): Promise<string> {
  let text: string | undefined;
  try {
    text = await readAtMost(file, MAX_CONFIG_FILE_BYTES);
  } catch (err) {
    throw invalid(file, [{ path: '', message: `cannot read the file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` }], err);
  }
  if (text === undefined) throw invalid(file, [{ path: '', message: `larger than ${MAX_CONFIG_FILE_BYTES} bytes: not a config file` }]);
  return text;
}

/**
 * The rule check of src/policy/policy.ts (`ruleIssues`, as {@link ValidateOptions.checkRules})
 * for a caller that cannot await its import (createSwitchyard is synchronous): the CEL compiler
 * is loaded at the first call, by a synchronous `require` of that ES module, which Node does
 * without a flag from 20.19 and 22.12 on (22.12 alone prints an ExperimentalWarning, unless the
 * package is under node_modules). {@link validateConfig} calls it only for a config it refuses
 * anyway and that has rules, so a config that passes never loads CEL here. Where `require`
 * cannot load it (Node 22.0 to 22.11 without `--experimental-require-module`; a module still
 * being loaded by another instance's `import()`, ERR_REQUIRE_CYCLE_MODULE) it checks nothing and
 * returns []: the rules only add to a refusal that is coming anyway, and their errors show at
 * `ready()` once the others are fixed.
 * @param rules the rules as written (`undefined` for one not well-formed enough to compile).
 * @param base JSON Pointer of the policy (`/policy`, `/mcpServers/NAME/policy`).
 * @returns each rule's CEL error at `BASE/rules/I/when` and each later duplicate name at `BASE/rules/I/name`.
 * @see docs/embedding.md, "Choices made where the task was silent"
 */
export function ruleIssuesNow(rules: readonly RuleSource[], base: string): ConfigIssue[] {
  let check: NonNullable<ValidateOptions['checkRules']>;
  try {
    check = (requireHere('../policy/policy.js') as { ruleIssues: NonNullable<ValidateOptions['checkRules']> }).ruleIssues;
  } catch {
    // Whatever stopped the require (see above), the refusal goes on without the rules' errors.
    return [];
  }
  return check(rules, base);
}

/**
 * Reads and validates a config file: YAML (`.yaml`, `.yml`) or JSON (`.json`; other names are
 * sniffed), in the Switchyard shape or the `mcpServers` shape. A relative `cwd` resolves against
 * the file's directory. See {@link validateConfig} for the steps and docs/config.md for the keys.
 * @param file path of the config file.
 * @returns the normalized, deep-frozen config.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when the file cannot be read or parsed, is larger
 *   than MAX_CONFIG_FILE_BYTES, or fails validation; `data.errors` lists every failing path.
 */
export async function loadConfig(file: string, opts: ValidateOptions = {}): Promise<FrozenConfig> {
  const value = parseConfigText(await readConfigText(file), file);
  // The CEL compiler costs start-up time: loaded only for a file with a policy, which the gateway compiles anyway.
  const checkRules = opts.checkRules ?? (hasPolicy(value) ? (await import('../policy/policy.js')).ruleIssues : undefined);
  return validateConfig(value, file, { baseDir: path.dirname(path.resolve(file)), ...opts, checkRules });
}

// ---------------------------------------------------------------------------------------------
// Compile-time checks: the hand-written types name exactly the keys schema.json defines.
// ---------------------------------------------------------------------------------------------

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
type Props<T> = T extends { properties: infer P } ? keyof P : never;
type Defs = Schema['$defs'];
/** Keys MCP client files carry for the client itself; accepted and dropped. */
type ClientOnlyKey = 'type' | 'disabled' | 'autoApprove' | 'alwaysAllow' | 'timeout';

type _SchemaChecks = [
  Assert<Same<Props<Schema>, Exclude<keyof FrozenConfig, never> | '$schema' | 'mcpServers'>>,
  Assert<Same<Props<Schema['properties']['listen']>, keyof ListenConfig>>,
  Assert<Same<Props<Schema['properties']['aggregate']>, keyof AggregateConfig>>,
  Assert<Same<Props<Schema['properties']['cache']>, keyof CacheConfig>>,
  Assert<Same<Props<Schema['properties']['cluster']>, keyof ClusterConfig>>,
  Assert<Same<Props<Schema['properties']['cors']>, keyof CorsConfig>>,
  Assert<Same<Props<Schema['properties']['listCache']>, keyof ListCacheConfig>>,
  Assert<Same<Props<Defs['dialects']>, keyof DialectSwitches>>,
  Assert<Same<Props<Defs['dialectOverrides']>, keyof DialectSwitches>>,
  Assert<Same<Props<Defs['limits']>, keyof Limits>>,
  Assert<Props<Defs['limitOverrides']> extends keyof Limits ? true : false>,
  Assert<Same<Props<Defs['upstream']>, Exclude<keyof StdioUpstreamConfig | keyof HttpUpstreamConfig, 'name' | 'sseSetting'> | ClientOnlyKey>>,
  // The input types: the same key sets as written.
  Assert<Same<Props<Schema>, keyof ConfigInput>>,
  Assert<Same<Props<Defs['upstream']>, keyof UpstreamInput>>,
  Assert<Same<Props<Schema['properties']['admin']>, keyof AdminConfig>>,
];
