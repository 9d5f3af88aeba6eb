// Flags and programmatic options as a raw config object: the one shape every way of configuring
// Switchyard passes through before schema validation (docs/config.md, "Precedence").

import type { Limits } from '../core/limits.js';
import { splitCommand } from '../io/command.js';

/** The dialect ids flags name. */
export type DialectFlag = '2026-07-28' | '2025-03-26' | '2024-11-05';

/**
 * What flags (or a test, or an embedding application) can say, each key optional. Every key maps
 * to one config key (see {@link configFromOptions}); nothing here has a default of its own: the
 * schema's defaults apply.
 */
export interface GatewayOptions {
  /** Interface to bind → `listen.host`. */
  host: string;
  /** TCP port (0 picks a free one) → `listen.port`. */
  port: number;
  /** MCP path of the single upstream's mount → `upstreams.default.path` (flag mode only). */
  path: string;
  /** Command line of a stdio MCP server → `upstreams.default.command`/`args`. */
  stdio: string | undefined;
  /** URL of an HTTP MCP server of any era → `upstreams.default.url`. */
  upstreamUrl: string;
  /** The single upstream's era (`auto` probes) → `upstreams.default.era`. */
  upstreamEra: string;
  /** Stateful upstreams: one upstream session per client session or one shared → `isolation`. */
  isolation: 'per-session' | 'shared';
  /** Headers sent to the HTTP upstream → `headers`. */
  upstreamHeaders: Record<string, string>;
  /** HMAC key for held calls' `requestState` → `requestStateKey`. */
  requestStateKey: string;
  /** Strict schema mode → `strict`. */
  strict: 'off' | 'log' | 'reject';
  /** Dialects to serve (an allowlist) → `dialects`. */
  dialects: readonly DialectFlag[];
  /** Hosts an Origin may name → `allowedOrigins`. */
  allowedOrigins: readonly string[];
  /** When non-empty, Host must be one of these → `allowedHosts`. */
  allowedHosts: readonly string[];
  /** Origins whose pages may read answers (CORS) → `cors.origins`. */
  corsOrigins: readonly string[];
  /** Peers trusted to set X-Forwarded-* (false, a hop count, or addresses/CIDRs) → `trustProxy`. */
  trustProxy: false | number | readonly string[];
  /** The URL clients reach the listener's root at → `publicBaseUrl`. */
  publicBaseUrl: string;
  /** pino level → `logLevel`. */
  logLevel: string;
  /** Bounds (any subset) → `limits`. */
  limits: Partial<Limits>;
  /** Admin listener port (0 picks a free one) → `admin.port`. */
  adminPort: number;
  /** `false` turns the admin listener off → `admin: false`. */
  admin: false;
  /** Fail the start when an upstream cannot start → `requireUpstreams`. */
  requireUpstreams: boolean;
  /** Redis shared by replicas → `cluster.redis` (the key comes from `SWITCHYARD_CLUSTER_KEY` or the file). */
  redis: string;
}

type Raw = Record<string, unknown>;

/**
 * The top-level part of the raw config that `o` names (no upstreams): listener, dialects,
 * allowlists, log level, bounds, strict mode, requestState key, admin listener, requireUpstreams, cluster Redis.
 */
export function topLevelOf(o: Partial<GatewayOptions>): Raw {
  const raw: Raw = {};
  const listen: Raw = {};
  if (o.host !== undefined) listen.host = o.host;
  if (o.port !== undefined) listen.port = o.port;
  if (Object.keys(listen).length > 0) raw.listen = listen;
  if (o.dialects !== undefined)
    raw.dialects = { modern: o.dialects.includes('2026-07-28'), streamable: o.dialects.includes('2025-03-26'), legacySse: o.dialects.includes('2024-11-05') };
  if (o.allowedOrigins !== undefined) raw.allowedOrigins = [...o.allowedOrigins];
  if (o.allowedHosts !== undefined) raw.allowedHosts = [...o.allowedHosts];
  if (o.corsOrigins !== undefined) raw.cors = { origins: [...o.corsOrigins] };
  if (o.trustProxy !== undefined) raw.trustProxy = Array.isArray(o.trustProxy) ? [...(o.trustProxy as readonly string[])] : o.trustProxy;
  if (o.publicBaseUrl !== undefined) raw.publicBaseUrl = o.publicBaseUrl;
  if (o.logLevel !== undefined) raw.logLevel = o.logLevel;
  if (o.limits !== undefined && Object.keys(o.limits).length > 0) raw.limits = { ...o.limits };
  if (o.strict !== undefined) raw.strict = o.strict;
  if (o.requestStateKey !== undefined) raw.requestStateKey = o.requestStateKey;
  if (o.admin === false) raw.admin = false;
  else if (o.adminPort !== undefined) raw.admin = { port: o.adminPort };
  if (o.requireUpstreams !== undefined) raw.requireUpstreams = o.requireUpstreams;
  if (o.redis !== undefined) raw.cluster = { redis: o.redis };
  return raw;
}

/**
 * The whole raw config of a flag-configured gateway: the top level of `o` plus one upstream,
 * `default`, at `o.path` (default `/mcp`): a stdio child (`stdio`), an HTTP server
 * (`upstreamUrl`), or the embedded demo.
 * @throws Error when `stdio` is not a valid command line (unbalanced quotes)
 */
export function configFromOptions(o: Partial<GatewayOptions>): Raw {
  const raw = topLevelOf(o);
  const up: Raw = { path: o.path ?? '/mcp' };
  if (o.stdio !== undefined) {
    const argv = splitCommand(o.stdio);
    up.command = argv[0];
    up.args = argv.slice(1);
    if (o.upstreamEra !== undefined) up.era = o.upstreamEra;
  } else if (o.upstreamUrl !== undefined) {
    up.url = o.upstreamUrl;
    if (o.upstreamEra !== undefined) up.era = o.upstreamEra;
    if (o.isolation !== undefined) up.isolation = o.isolation;
    if (o.upstreamHeaders !== undefined && Object.keys(o.upstreamHeaders).length > 0) up.headers = { ...o.upstreamHeaders };
  } else up.transport = 'embedded';
  raw.upstreams = { default: up };
  return raw;
}

function isObj(v: unknown): v is Raw {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Lays `over` on top of a raw config value (a parsed file): objects merge key by key, anything
 * else replaces. A key `over` sets at the top level also replaces what each upstream entry sets
 * for that same key in `dialects` and `limits`, so that a flag wins everywhere it applies.
 */
export function overlay(base: unknown, over: Raw): Raw {
  const out: Raw = isObj(base) ? structuredClone(base) : {};
  const merge = (into: Raw, from: Raw) => {
    for (const [k, v] of Object.entries(from)) {
      if (isObj(v) && isObj(into[k])) merge(into[k], v);
      else into[k] = structuredClone(v);
    }
  };
  merge(out, over);
  for (const mapKey of ['upstreams', 'mcpServers']) {
    const map = out[mapKey];
    if (!isObj(map)) continue;
    for (const u of Object.values(map)) {
      if (!isObj(u)) continue;
      for (const k of ['dialects', 'limits'] as const) {
        const set = over[k];
        const mine = u[k];
        if (isObj(set) && isObj(mine)) for (const key of Object.keys(set)) delete mine[key];
      }
    }
  }
  return out;
}

/** Environment variables that set config keys, between flags and the file in precedence. */
export const ENV_KEYS = {
  SWITCHYARD_HOST: 'listen.host',
  SWITCHYARD_PORT: 'listen.port',
  SWITCHYARD_LOG_LEVEL: 'logLevel',
  SWITCHYARD_REQUEST_STATE_KEY: 'requestStateKey',
  SWITCHYARD_STRICT: 'strict',
  SWITCHYARD_CLUSTER_KEY: 'cluster.key',
  SWITCHYARD_REPLICA_ID: 'cluster.replicaId',
} as const;

/** The raw config keys the environment sets (only `ENV_KEYS`; values are strings, the schema coerces them). */
export function envOverrides(env: Readonly<Record<string, string | undefined>>): Raw {
  const raw: Raw = {};
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    const [a, b] = key.split('.');
    if (b === undefined) raw[a] = v;
    else raw[a] = { ...(raw[a] as Raw | undefined), [b]: v };
  }
  return raw;
}
