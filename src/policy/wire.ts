// Policy wired into the gateway from one config: per upstream the interceptor chain (curation, policy, rate limits, argument validation) and the notification filters of each mount.

import type { Interceptor, NotificationFilter } from '../core/interceptor.js';
import type { CoreNotification } from '../core/request.js';
import { createArgumentValidator, type ArgumentValidator } from './arguments.js';
import type { PolicyLog } from './components.js';
import { SwitchyardError } from '../core/errors.js';
import { configError, type PolicyConfig, type PolicyConfigIssue, type RateLimitConfig, type UpstreamPolicyConfig } from './config.js';
import { createCurationInterceptor, createCurationNotificationFilter } from './curation.js';
import { createPolicyInterceptor, createPolicyNotificationFilter } from './interceptor.js';
import type { Policy } from './policy.js';
import { createMemoryBucketStore, createRateLimiter, type BucketStore } from './rate-limit.js';
import { createUnknownNameInterceptor } from './unknown-names.js';

/** One upstream entry as the wiring reads it: its curation keys and its own `policy` and `rateLimits`. */
export interface PolicyUpstreamEntry extends UpstreamPolicyConfig {
  /** Replaces the top-level `policy` for calls to this upstream. */
  policy?: PolicyConfig;
  /** Replaces the top-level `rateLimits` for calls to this upstream. */
  rateLimits?: readonly RateLimitConfig[];
}

/** The parts of a config the wiring reads (the frozen config fits as it is). */
export interface PolicyWiringConfig {
  policy?: PolicyConfig;
  rateLimits?: readonly RateLimitConfig[];
  upstreams: Readonly<Record<string, PolicyUpstreamEntry>>;
}

/** Collaborators of {@link createPolicyWiring}. */
export interface PolicyWiringDeps {
  /** Audit lines (one per invocation decision), rule failures, schema warnings. */
  log: PolicyLog;
  /** Where token buckets live (default: in memory, at most {@link DEFAULT_MAX_BUCKETS}). */
  store?: BucketStore;
  /**
   * Called once per upstream, on its first validated `tools/call`, with a callback that forgets
   * the upstream's cached tool list: subscribe it to that upstream's
   * `notifications/tools/list_changed`. Without it lists expire after their TTL (60 s).
   */
  watchTools?: (upstream: string, changed: () => void) => void;
}

/** How a mount's notifications name their upstream. */
export type MountUpstreams =
  /** One upstream: every notification is its own. */
  | { upstream: string }
  /**
   * An aggregate: `member(uri)` gives the member and its own URI of an aggregate resource URI
   * (`switchyard://NAME/<uri>`), undefined when the URI names no member.
   */
  | { member: (uri: string) => { member: string; uri: string } | undefined };

/** The wired policy of one gateway. */
export interface PolicyWiring {
  /**
   * The interceptors of every call to `upstream`, innermost first as `compose` and
   * `guardUpstream` take them: argument validation, rate limits, policy, curation (outermost).
   * Empty when the config asks for none of them (no policy, no limits, no curation, and
   * validation off). Put other interceptors (telemetry) after these.
   */
  interceptorsFor(upstream: string): Interceptor[];
  /** The notification filters of a mount: updates of resources the subscriber may not read, or that curation hides, are dropped. */
  notificationFiltersFor(mount: MountUpstreams): NotificationFilter[];
  /** Forgets `upstream`'s cached tool list (its `notifications/tools/list_changed`). */
  toolsChanged(upstream: string): void;
}

/** Buckets kept by the default in-memory store; the least recently used bucket is evicted past it. */
export const DEFAULT_MAX_BUCKETS = 65_536;
/** Compiled input schemas kept by the argument validator (LRU). */
export const MAX_COMPILED_SCHEMAS = 4_096;

/** A store whose keys are namespaced, so that an upstream's own limits never share buckets with the top-level ones. */
function namespaced(store: BucketStore, ns: string): BucketStore {
  return { take: (key, cost, ratePerSec, burst, nowMs) => store.take(`${ns}/${key}`, cost, ratePerSec, burst, nowMs) };
}

function pointer(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Compiles the policy keys of a config into interceptors and notification filters: the
 * top-level `policy` and `rateLimits` (one policy and one set of buckets for every upstream
 * that has none of its own), each upstream's own `policy` and `rateLimits`, its curation
 * (`tools`, `prompts`, `resources`) and `validateArguments` (default on).
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID listing every failing path (CEL compile errors,
 *   duplicate names, curation conflicts), `data: { source: 'policy', errors }`
 * @see docs/policy.md (order of the chain and why)
 */
export async function createPolicyWiring(config: PolicyWiringConfig, deps: PolicyWiringDeps): Promise<PolicyWiring> {
  const { log } = deps;
  const store = deps.store ?? createMemoryBucketStore({ maxBuckets: DEFAULT_MAX_BUCKETS });
  const names = Object.keys(config.upstreams);
  // Loaded only when a policy is configured: the CEL library costs start-up time.
  const { compilePolicy } =
    config.policy || names.some((n) => config.upstreams[n].policy) ? await import('./policy.js') : { compilePolicy: undefined as never };
  // Every part is compiled, and the config errors of all of them are thrown together, so that
  // `switchyard validate` and a refused reload list every failing path, not the first part's.
  const issues: PolicyConfigIssue[] = [];
  const collect = <T>(build: () => T): T | undefined => {
    try {
      return build();
    } catch (err) {
      const errors = err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID' && err.data?.source === 'policy' ? err.data.errors : undefined;
      if (!Array.isArray(errors)) throw err;
      issues.push(...(errors as PolicyConfigIssue[]));
      return undefined;
    }
  };
  const top = config.policy ? collect(() => compilePolicy(config.policy!, { path: '/policy', log })) : undefined;
  const policies = new Map<string, Policy | undefined>();
  const limiters = new Map<string, Interceptor | undefined>();
  const topLimiter =
    config.rateLimits && config.rateLimits.length > 0 ? collect(() => createRateLimiter({ rateLimits: [...config.rateLimits!], store })) : undefined;
  for (const n of names) {
    const u = config.upstreams[n];
    const at = `/upstreams/${pointer(n)}`;
    policies.set(n, u.policy ? collect(() => compilePolicy(u.policy!, { path: `${at}/policy`, log })) : top);
    limiters.set(
      n,
      u.rateLimits ? collect(() => createRateLimiter({ rateLimits: [...u.rateLimits!], store: namespaced(store, n), path: `${at}/rateLimits` })) : topLimiter,
    );
  }
  const curated = names.some((n) => ['tools', 'prompts', 'resources'].some((k) => config.upstreams[n][k as 'tools'] !== undefined));
  const curation = curated ? collect(() => createCurationInterceptor({ upstreams: config.upstreams })) : undefined;
  if (issues.length > 0) throw configError(issues);
  const validator: ArgumentValidator = createArgumentValidator({ log, maxSchemas: MAX_COMPILED_SCHEMAS, upstreams: config.upstreams });
  const validating = new Set(names.filter((n) => config.upstreams[n].validateArguments !== false));
  const policyInterceptors = new Map<Policy, Interceptor>();
  const interceptorOf = (p: Policy) => {
    let i = policyInterceptors.get(p);
    if (!i) policyInterceptors.set(p, (i = createPolicyInterceptor(p, { log })));
    return i;
  };
  const unknownNames = createUnknownNameInterceptor();
  const watched = new Set<string>();
  // Not an async function: it runs on every request of a validating upstream (the default), and
  // an async frame cost each its own promise and an await; the next stage's promise is returned
  // as it is. What is thrown before it runs becomes a rejection, as from an async function.
  const watching: Interceptor = (next) => (ctx) => {
    try {
      const u = ctx.upstream;
      if (ctx.method === 'tools/call' && u !== undefined && deps.watchTools && !watched.has(u) && validating.has(u)) {
        watched.add(u);
        deps.watchTools(u, () => validator.invalidate(u));
      }
      return next(ctx);
    } catch (err) {
      return Promise.reject(err);
    }
  };
  // Per upstream: the filters that decide its resource updates, built on first use.
  const memberFilters = new Map<string, NotificationFilter[]>();
  const filtersOf = (upstream: string): NotificationFilter[] => {
    let fs = memberFilters.get(upstream);
    if (!fs) {
      fs = [];
      const policy = policies.get(upstream);
      if (policy) fs.push(createPolicyNotificationFilter(policy, { upstream, log }));
      if (curatedUpstream(config.upstreams[upstream])) fs.push(createCurationNotificationFilter({ upstreams: config.upstreams, upstream }));
      memberFilters.set(upstream, fs);
    }
    return fs;
  };

  return {
    interceptorsFor(upstream) {
      const out: Interceptor[] = [];
      const policy = policies.get(upstream);
      // Where a name may be hidden, a name the upstream lacks gets the same error (innermost: upstream names).
      if (policy?.hideDenied || curatedUpstream(config.upstreams[upstream])) out.push(unknownNames);
      if (validating.has(upstream)) out.push(validator, watching);
      const limiter = limiters.get(upstream);
      if (limiter) out.push(limiter);
      if (policy) out.push(interceptorOf(policy));
      if (curation && curatedUpstream(config.upstreams[upstream])) out.push(curation);
      return out;
    },
    notificationFiltersFor(mount) {
      const members = 'upstream' in mount ? [mount.upstream] : names;
      if (members.every((n) => filtersOf(n).length === 0)) return [];
      // Decided on the upstream's own URI; what is delivered stays as the mount shows it.
      const filter: NotificationFilter = (subscriber, n) => {
        if (n.method !== 'notifications/resources/updated' || typeof n.params.uri !== 'string') return n;
        const own = 'upstream' in mount ? { member: mount.upstream, uri: n.params.uri } : mount.member(n.params.uri);
        if (!own) return null;
        const probe: CoreNotification = { method: n.method, params: { ...n.params, uri: own.uri } };
        return filtersOf(own.member).every((f) => f(subscriber, probe) !== null) ? n : null;
      };
      return [filter];
    },
    toolsChanged(upstream) {
      validator.invalidate(upstream);
    },
  };
}

function curatedUpstream(u: PolicyUpstreamEntry | undefined): boolean {
  return u !== undefined && (u.tools !== undefined || u.prompts !== undefined || u.resources !== undefined);
}
