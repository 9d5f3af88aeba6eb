// The policy library: authorization rules, curation, argument validation and rate limits as interceptors.

export { compilePolicy, type CompilePolicyOptions, type Decision, type Policy, type PolicyInput, type PolicyRequest } from './policy.js';
export {
  createPolicyInterceptor,
  createPolicyNotificationFilter,
  filterList,
  type PolicyInterceptorOptions,
  type PolicyNotificationFilterOptions,
} from './interceptor.js';
export { createCurationInterceptor, createCurationNotificationFilter, type CurationNotificationFilterOptions, type CurationOptions } from './curation.js';
export { RESOURCE_CARRIERS, WITHHELD_RESOURCE_TEXT, withheldResources, type CarrierRequest, type ResourceReadable } from './embedded.js';
export { createArgumentValidator, type ArgumentValidator, type ArgumentValidatorOptions } from './arguments.js';
export { createUnknownNameInterceptor } from './unknown-names.js';
export { createMemoryBucketStore, createRateLimiter, type BucketStore, type MemoryBucketStoreOptions, type RateLimiterOptions } from './rate-limit.js';
export { INVOCATION_METHODS, INVOKED_BY, PolicyLines, compileGlobs, unknownComponentError, type PolicyLog } from './components.js';
export {
  POLICY_SCHEMA,
  checkFragment,
  policyConfigProperties,
  type ComponentCuration,
  type Effect,
  type PolicyConfig,
  type PolicyConfigIssue,
  type PolicyRuleConfig,
  type RateLimitConfig,
  type ResourceCuration,
  type RootPolicyConfig,
  type UpstreamPolicyConfig,
} from './config.js';
export {
  createPolicyWiring,
  DEFAULT_MAX_BUCKETS,
  MAX_COMPILED_SCHEMAS,
  type MountUpstreams,
  type PolicyUpstreamEntry,
  type PolicyWiring,
  type PolicyWiringConfig,
  type PolicyWiringDeps,
} from './wire.js';
