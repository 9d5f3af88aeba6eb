// The policy config shapes, their JSON Schema fragments (schema.json), and the check every factory runs on its input.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020.js';
import { SwitchyardError } from '../core/errors.js';
import type { JsonSchemaDocument } from '../core/message.js';

/** What a rule or the default decides. */
export type Effect = 'allow' | 'deny';

/** One authorization rule (`policy.rules[i]`). */
export interface PolicyRuleConfig {
  /** Unique name, reported in audit lines. */
  name: string;
  /** What a match means. */
  effect: Effect;
  /** CEL expression of type bool over `principal`, `component`, `request`. */
  when: string;
}

/** The `policy` config key. */
export interface PolicyConfig {
  /** The decision when no rule matches. */
  default: Effect;
  /** Answer denials with the unknown-name error (schema default false). */
  hideDenied?: boolean;
  /** The rules (schema default []). */
  rules?: PolicyRuleConfig[];
}

/** One token-bucket limit (`rateLimits[i]`). */
export interface RateLimitConfig {
  /** Unique name (part of the bucket key). */
  name: string;
  /** `principal`: one bucket per principal; `principal+tool`: one per principal and tool (tools/call only). */
  per: 'principal' | 'principal+tool';
  /** Refill rate, tokens per second. */
  ratePerSec: number;
  /** Bucket capacity, tokens (requests). */
  burst: number;
  /** Only tools/call of tools matching one of these globs counts. */
  tools?: string[];
}

/** Curation of one upstream's tools or prompts (`upstreams.NAME.tools`, `.prompts`). */
export interface ComponentCuration {
  /** When present, only matching names are visible. */
  include?: string[];
  /** Matching names are hidden. */
  exclude?: string[];
  /** Upstream name to client-visible name. */
  rename?: Record<string, string>;
  /** Upstream name to replacement description. */
  describe?: Record<string, string>;
}

/** Curation of one upstream's resources and resource templates (`upstreams.NAME.resources`). */
export interface ResourceCuration {
  /** When present, only matching URIs and URI templates are visible. */
  include?: string[];
  /** Matching URIs and URI templates are hidden. */
  exclude?: string[];
  /** URI or URI template to replacement description. */
  describe?: Record<string, string>;
}

/** The policy keys of one upstream's config entry (other keys of that entry are ignored here). */
export interface UpstreamPolicyConfig {
  /** Curation of the upstream's tools. */
  tools?: ComponentCuration;
  /** Curation of the upstream's prompts. */
  prompts?: ComponentCuration;
  /** Curation of the upstream's resources and resource templates. */
  resources?: ResourceCuration;
  /** Check tools/call arguments against the tool's inputSchema (schema default true). */
  validateArguments?: boolean;
}

/** The top-level policy keys of a config file. */
export interface RootPolicyConfig {
  /** Authorization rules. */
  policy?: PolicyConfig;
  /** Token-bucket limits. */
  rateLimits?: RateLimitConfig[];
}

/** One failing config path: a JSON Pointer into the file as written and what is wrong there. */
export interface PolicyConfigIssue {
  /** JSON Pointer (RFC 6901), e.g. `/policy/rules/2/when`. */
  readonly path: string;
  /** What is wrong, e.g. the CEL compiler's message. */
  readonly message: string;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- typescript-eslint takes the import attributes of a type query for a value
type Schema = typeof import('./schema.json', { with: { type: 'json' } });

/**
 * The JSON Schema fragments (draft 2020-12, `$id` `https://switchyard.invalid/schema/policy.json`)
 * the config loader includes: add this document to its ajv instance, then merge
 * {@link policyConfigProperties} into its own `properties`. Frozen.
 * @see https://json-schema.org/draft/2020-12/json-schema-core (`$id`, `$ref`)
 */
export const POLICY_SCHEMA: JsonSchemaDocument = deepFreeze(JSON.parse(readFileSync(new URL('./schema.json', import.meta.url), 'utf8')) as JsonSchemaDocument);

// The same document with its own type, for the reads below; kept out of the declarations, which
// must not import a JSON module (JsonSchemaDocument).
const schema = POLICY_SCHEMA as Readonly<Schema>;

/** The default of an upstream's `validateArguments` (docs/policy.md): from the schema, its one source. */
export const VALIDATE_ARGUMENTS_DEFAULT: boolean = schema.$defs.upstream.properties.validateArguments.default;

/**
 * The policy properties ready to merge into another schema's `properties`: `root` for the config
 * file's top level (`policy`, `rateLimits`), `upstream` for one upstream entry (`tools`,
 * `prompts`, `resources`, `validateArguments`). Internal `$ref`s are made absolute, so they
 * resolve once {@link POLICY_SCHEMA} is added to the same ajv instance; defaults stay on the
 * properties themselves, where ajv's `useDefaults` applies them.
 */
export function policyConfigProperties(where: 'root' | 'upstream'): Record<string, object> {
  const props = schema.$defs[where].properties as Record<string, { $ref?: string }>;
  return Object.fromEntries(
    Object.entries(props).map(([k, v]) => [
      k,
      typeof v.$ref === 'string' && v.$ref.startsWith('#') ? { ...v, $ref: `${schema.$id}${v.$ref}` } : structuredClone(v),
    ]),
  );
}

/** The fragment names a factory checks its input against. */
export type FragmentName = 'policy' | 'rateLimits' | 'upstream';

let ajv: Ajv2020 | undefined;
const validators = new Map<FragmentName, ValidateFunction>();

function validatorOf(name: FragmentName): ValidateFunction {
  let v = validators.get(name);
  if (!v) {
    // No coercion: library callers hand in typed values; the loader coerces YAML before this runs.
    if (!ajv) {
      // ajv (CommonJS) is loaded here, by the first fragment checked, not at import.
      const { Ajv2020: Ctor } = createRequire(import.meta.url)('ajv/dist/2020.js') as { Ajv2020: new (o: Options) => Ajv2020 };
      ajv = new Ctor({ strict: true, allErrors: true, useDefaults: true, coerceTypes: false }).addSchema(structuredClone(POLICY_SCHEMA));
    }
    v = ajv.getSchema(`${schema.$id}#/$defs/${name}`);
    if (!v) throw new Error(`policy schema lacks $defs/${name}`);
    validators.set(name, v);
  }
  return v;
}

/**
 * Checks `value` against one fragment of schema.json and returns a deep copy with the schema's
 * defaults applied (the only place defaults live).
 * @param basePath JSON Pointer of `value` in the config file, prefixed to every issue's path.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID, `data: { source: 'policy', errors: PolicyConfigIssue[] }`
 */
export function checkFragment<T>(name: FragmentName, value: unknown, basePath: string): T {
  const copy = value === undefined ? undefined : structuredClone(value);
  const v = validatorOf(name);
  if (!v(copy)) throw configError((v.errors ?? []).map((e) => issueOf(e, basePath)));
  return copy as T;
}

/**
 * The config error for `issues`, shaped like the config loader's: every failing path listed
 * (`SWY_ERR_CONFIG_INVALID`, `data: { source: 'policy', errors }`); the caller throws it.
 * @see RFC 6901 (the paths are JSON Pointers)
 */
export function configError(issues: PolicyConfigIssue[]): SwitchyardError {
  const lines = issues.map((e) => `${e.path || '(root)'}: ${e.message}`);
  return new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
    detail: `policy: ${issues.length} error${issues.length === 1 ? '' : 's'}: ${lines.join('; ')}`,
    data: { source: 'policy', errors: issues },
  });
}

/**
 * The duplicate names of a `rateLimits` list: each later entry of a name, at `BASE/I/name`. An
 * entry without a string `name` is skipped (the config loader passes the entries of a refused
 * file this way; `createRateLimiter` passes checked ones).
 * @param limits the list as written.
 * @param base JSON Pointer of the list (`/rateLimits`, `/upstreams/NAME/rateLimits`).
 */
export function duplicateLimitNames(limits: readonly unknown[], base: string): PolicyConfigIssue[] {
  const seen = new Map<string, number>();
  return limits.flatMap((c, i) => {
    const name = c !== null && typeof c === 'object' ? (c as { name?: unknown }).name : undefined;
    if (typeof name !== 'string') return [];
    const first = seen.get(name);
    if (first === undefined) seen.set(name, i);
    return first === undefined ? [] : [{ path: `${base}/${i}/name`, message: `duplicate limit name ${name} (also ${base}/${first}/name)` }];
  });
}

/**
 * The renames of one curation's `rename` map that give a client-visible name an earlier entry
 * gives already, at `BASE/rename/FROM`. An entry whose target is not a string is skipped.
 * @param rename upstream name to client-visible name, as written.
 * @param base JSON Pointer of the curation (`/upstreams/NAME/tools`, `…/prompts`).
 */
export function renameConflicts(rename: Readonly<Record<string, unknown>>, base: string): PolicyConfigIssue[] {
  const back = new Map<string, string>();
  const out: PolicyConfigIssue[] = [];
  for (const [from, to] of Object.entries(rename)) {
    if (typeof to !== 'string') continue;
    const other = back.get(to);
    if (other !== undefined)
      out.push({ path: `${base}/rename/${from.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: `renames to ${to}, as ${other} does` });
    else back.set(to, from);
  }
  return out;
}

function issueOf(e: ErrorObject, basePath: string): PolicyConfigIssue {
  let path = basePath + e.instancePath;
  let message = e.message ?? e.keyword;
  if (e.keyword === 'additionalProperties') {
    const key = (e.params as { additionalProperty: string }).additionalProperty;
    path = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    message = 'unknown key';
  } else if (e.keyword === 'enum') {
    message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((x) => JSON.stringify(x)).join(', ')}`;
  } else if (e.keyword === 'required') {
    const key = (e.params as { missingProperty: string }).missingProperty;
    path = `${path}/${key}`;
    message = 'is required';
  }
  return { path, message };
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

// Compile-time checks: the hand-written types name exactly the keys schema.json defines.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
type Props<T> = T extends { properties: infer P } ? keyof P : never;
type Defs = Schema['$defs'];
type _SchemaChecks = [
  Assert<Same<Props<Defs['root']>, keyof RootPolicyConfig>>,
  Assert<Same<Props<Defs['upstream']>, keyof UpstreamPolicyConfig>>,
  Assert<Same<Props<Defs['policy']>, keyof PolicyConfig>>,
  Assert<Same<Props<Defs['policyRule']>, keyof PolicyRuleConfig>>,
  Assert<Same<Props<Defs['rateLimit']>, keyof RateLimitConfig>>,
  Assert<Same<Props<Defs['componentCuration']>, keyof ComponentCuration>>,
  Assert<Same<Props<Defs['resourceCuration']>, keyof ResourceCuration>>,
];
