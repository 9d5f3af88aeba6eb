// Strict mode: every message to and from clients validated against the official JSON schema of
// the era in use (vendored verbatim in ./schemas, see its PROVENANCE.md).

import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { CoreLog } from '../core/exchange.js';
import type { MessageValidator, StrictViolation } from '../core/strict.js';
import type { JsonObject } from '../core/message.js';
import { textOf } from '../core/message.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

/**
 * Where the official schemas live: `schemas/` beside this file (tsc emits the JSON files next to
 * the compiled validator, and the package ships them).
 */
export const SCHEMAS_DIR = new URL('./schemas/', import.meta.url);

/** The result definition a method's successful response must match. */
const RESULT_DEF: Readonly<Record<string, string>> = {
  initialize: 'InitializeResult',
  'server/discover': 'DiscoverResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'resources/list': 'ListResourcesResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'resources/read': 'ReadResourceResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
  'completion/complete': 'CompleteResult',
  'subscriptions/listen': 'SubscriptionsListenResult',
  ping: 'EmptyResult',
  'logging/setLevel': 'EmptyResult',
  'resources/subscribe': 'EmptyResult',
  'resources/unsubscribe': 'EmptyResult',
};

interface EraSchemas {
  /** Reports every violation (`allErrors`): used only for a message the quick one refused. */
  ajv: Ajv;
  /** Stops at the first violation: the check every message pays. */
  quick: Ajv;
  defs: string;
  /** Method → request or notification definition name. */
  byMethod: Map<string, string>;
  has: (def: string) => boolean;
  compiled: Map<string, ValidateFunction>;
  compiledQuick: Map<string, ValidateFunction>;
  /** What the quick validators are called with: {@link TOP_LEVEL} when no keyword of the schema writes into it, else nothing. */
  quickCxt: Parameters<ValidateFunction>[1];
  /** The envelope of a successful response (`JSONRPCResultResponse`, or `JSONRPCResponse` before 2025-11-25). */
  resultEnvelope: Checker;
  /** The envelope of an error response (`JSONRPCErrorResponse`, or `JSONRPCError`). */
  errorEnvelope: Checker;
  /** `InputRequiredResult`, in the eras that have it. */
  inputRequired: Checker | undefined;
  /**
   * Method → its request/notification definition and its result definition, resolved once. Only
   * methods the schema or RESULT_DEF names are kept, so the map is bounded by the schema.
   */
  plans: Map<string, MethodPlan>;
}

/** One definition messages are checked against, with its quick validator once compiled. */
interface Checker {
  def: string;
  /** undefined until first used; null when the schema cannot compile the definition (nothing is checked). */
  quick: ValidateFunction | null | undefined;
}

/** What a method's messages are checked against (undefined: nothing for that kind of message). */
interface MethodPlan {
  request: Checker | undefined;
  result: Checker | undefined;
}

/**
 * Ajv 2020-12 without annotation tracking, for the quick check. Ajv2020 always tracks which
 * properties and items each subschema evaluated, for `unevaluatedProperties`/`unevaluatedItems`;
 * to do so its `anyOf` runs every branch, even after one matched, building an error for each
 * branch that failed (a text content block: four failing content kinds per block). Without the
 * tracking, `anyOf` stops at the first branch that matches. Used only for schemas that have no
 * `unevaluated*` or dynamic-reference keyword ({@link tracksNothing}), where the tracking cannot
 * change a verdict; errors are always reported by the tracking instance.
 */
class Ajv2020Untracked extends Ajv2020 {
  constructor(opts: ConstructorParameters<typeof Ajv2020>[0]) {
    super(opts);
    // Read at compile time only (ajv's compile/validate and applicators): set before any compile.
    this.opts.unevaluated = false;
  }
}

/** Keywords whose result depends on annotation tracking (or on dynamic scope). */
const TRACKED_KEYWORDS = new Set(['unevaluatedProperties', 'unevaluatedItems', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor']);

/** True when no keyword in `schema` (at any depth) needs annotation tracking. */
function tracksNothing(schema: unknown, depth = 0): boolean {
  if (depth > 64 || !schema || typeof schema !== 'object') return depth <= 64;
  if (Array.isArray(schema)) return schema.every((x) => tracksNothing(x, depth + 1));
  for (const [k, v] of Object.entries(schema)) {
    if (TRACKED_KEYWORDS.has(k)) return false;
    if (!tracksNothing(v, depth + 1)) return false;
  }
  return true;
}

/** Options of the validator. */
export interface StrictOptions {
  /** `log`: report violations; `reject`: also refuse invalid client messages. */
  mode: 'log' | 'reject';
  log: CoreLog;
}

/**
 * Creates the strict-mode validator. Each era's schema is loaded on first use and each
 * definition compiled once (ajv), then reused for every message.
 * @see schema/<rev>/schema.json of the MCP specification repository
 */
export function createStrictValidator(opts: StrictOptions): MessageValidator {
  const eras = new Map<string, EraSchemas>();
  // The era last asked for: nearly every message of a gateway is of one era.
  let lastEra: string | undefined;
  let last: EraSchemas | undefined;
  const load = (era: string): EraSchemas | undefined => {
    if (era === lastEra) return last;
    let e = eras.get(era);
    if (!e) {
      e = loadEra(era);
      if (!e) return undefined;
      eras.set(era, e);
    }
    lastEra = era;
    last = e;
    return e;
  };
  const compiled = (ajv: Ajv, cache: Map<string, ValidateFunction>, e: EraSchemas, def: string): ValidateFunction | undefined => {
    let v = cache.get(def);
    if (!v) {
      v = ajv.getSchema(`mcp#/${e.defs}/${def}`);
      if (v) cache.set(def, v);
    }
    return v;
  };
  // A valid message (nearly all of them) is checked by the validator that stops at the first
  // violation; only a refused one is checked again to report every violation.
  const validate = (e: EraSchemas, def: string, value: unknown): Array<{ path: string; message: string }> | undefined => {
    const q = compiled(e.quick, e.compiledQuick, e, def);
    if (!q || q(value)) return undefined;
    const v = compiled(e.ajv, e.compiled, e, def);
    if (!v || v(value)) return undefined;
    return (v.errors ?? []).slice(0, 10).map((x) => ({ path: x.instancePath || '/', message: x.message ?? 'invalid' }));
  };
  /** True when `value` passes `c`'s quick validator (or there is none to pass). */
  const passes = (e: EraSchemas, c: Checker, value: unknown): boolean => {
    let q = c.quick;
    if (q === undefined) q = c.quick = compiled(e.quick, e.compiledQuick, e, c.def) ?? null;
    return q === null || q(value, e.quickCxt);
  };
  const planOf = (e: EraSchemas, method: string): MethodPlan | undefined => {
    let plan = e.plans.get(method);
    if (plan === undefined) {
      const request = e.byMethod.get(method);
      const resultDef = Object.prototype.hasOwnProperty.call(RESULT_DEF, method) ? RESULT_DEF[method] : undefined;
      // Bounded: only a method the schema or RESULT_DEF names gets a plan kept.
      if (request === undefined && resultDef === undefined) return undefined;
      plan = {
        request: request === undefined ? undefined : checker(request),
        result: resultDef !== undefined && e.has(resultDef) ? checker(resultDef) : undefined,
      };
      e.plans.set(method, plan);
    }
    return plan;
  };

  /** Every violation of a message the quick check refused (the full validators report them). */
  const violations = (
    e: EraSchemas,
    direction: StrictViolation['direction'],
    era: string,
    m: JsonObject,
    method: string | undefined,
    a: Checker | undefined,
    b: Checker | undefined,
    bValue: unknown,
  ): StrictViolation[] => {
    const found: StrictViolation[] = [];
    const m2 = typeof m.method === 'string' ? m.method : method;
    // A violation at the root of a prefixed value (`/`) is at the prefix itself: `/result`, not `/result/`.
    const add = (c: Checker, value: unknown, prefix: string): void => {
      for (const x of validate(e, c.def, value) ?? [])
        found.push({
          direction,
          era,
          method: m2 ?? textOf(m.method),
          path: prefix && x.path === '/' ? prefix : prefix + x.path,
          message: `${c.def}: ${x.message}`,
          envelope: false,
        });
    };
    if (a) add(a, m, '');
    if (b) add(b, bValue, '/result');
    for (const v of found) opts.log.warn({ strict: v }, 'strict: schema violation');
    return found;
  };

  return {
    mode: opts.mode,
    check(direction, era, msg, method) {
      const e = load(era);
      if (!e || !msg || typeof msg !== 'object') return NO_VIOLATIONS;
      const m = msg as JsonObject;
      // At most two definitions apply: the request's own, or a response's envelope and its result.
      let a: Checker | undefined;
      let b: Checker | undefined;
      let bValue: unknown;
      if (typeof m.method === 'string') a = planOf(e, m.method)?.request;
      else if ('error' in m) a = e.errorEnvelope;
      else if ('result' in m) {
        a = e.resultEnvelope;
        bValue = m.result;
        b = (bValue as JsonObject | undefined)?.resultType === 'input_required' ? e.inputRequired : method ? planOf(e, method)?.result : undefined;
      }
      // Nearly every message: each quick validator passes, and nothing is made (the slow path's
      // closure lives in its own function, so that this one allocates no context for it).
      if ((a === undefined || passes(e, a, m)) && (b === undefined || passes(e, b, bValue))) return NO_VIOLATIONS;
      return violations(e, direction, era, m, method, a, b, bValue);
    },
  };
}

/**
 * The data context a quick validator is called with at the top: ajv's own defaults, shared. Called
 * with none, ajv's generated code makes two objects per call (the context and its empty
 * `dynamicAnchors`, which only `$dynamicAnchor` writes into). `rootData` absent is the data itself.
 */
const TOP_LEVEL = Object.freeze({ instancePath: '', dynamicAnchors: Object.freeze({}) }) as unknown as Parameters<ValidateFunction>[1];
/** The property of a quick Ajv instance holding {@link TOP_LEVEL} for its generated code (`self` there is the instance). */
const SHARED_CONTEXT_KEY = 'switchyardSharedContext';

/**
 * The data context ajv's generated code builds for each call of one validator by another (a
 * `$ref` not inlined): `{instancePath: instancePath + "/content/" + i0, parentData: …,
 * parentDataProperty: …, rootData, dynamicAnchors}`, an object and a path string per call.
 * Matched up to the next `}`: a context whose expressions hold one (a property name with a brace)
 * is left as generated.
 */
const SUB_CONTEXT = /\{instancePath(?::[^{}]*?)?,parentData(?::[^{}]*?)?,parentDataProperty(?::[^{}]*?)?,rootData(?:,dynamicAnchors)?\}/g;
/** A generated validator's own parameters: the only place the context's names may remain. */
const SIGNATURE = /\{instancePath="", parentData, parentDataProperty, rootData=data(?:, dynamicAnchors=\{\})?\}=\{\}/g;
const CONTEXT_NAME = /\b(?:parentData|parentDataProperty|rootData|dynamicAnchors)\b/;

/**
 * ajv's `code.process` hook for the quick validators: each call of one validator by another is
 * given the shared top-level context ({@link TOP_LEVEL}) instead of a context made per call (about
 * 540 B a 2026-07-28 `tools/call` in strict mode). What the context carries is read only to build
 * error objects (`instancePath`), by keywords that write into the data (`parentData`,
 * `parentDataProperty`: defaults, coercion, removal, none of them on), by `$data` (`rootData`: off)
 * and by `$dynamicRef` (`dynamicAnchors`: schemas with it do not get here); a quick validator's
 * errors are never reported, and the verdict does not read the path. So the rewrite is made only
 * when, once the calls' contexts are replaced, none of those names is left outside the
 * validator's own parameters; otherwise the code is returned as generated.
 * @param code the source ajv generated for one schema (its `self` is the Ajv instance)
 * @returns the source with the calls' contexts shared, or `code` unchanged
 * @see ajv options, `code.process`; ajv lib/vocabularies/code.ts (callValidateCode)
 */
export function shareSubContexts(code: string): string {
  const rewritten = code.replace(SUB_CONTEXT, `self.${SHARED_CONTEXT_KEY}`);
  if (rewritten === code || CONTEXT_NAME.test(rewritten.replace(SIGNATURE, ''))) return code;
  return rewritten;
}

/** What a valid (or unknown) message gets: one shared empty list, frozen, instead of a new one per check. */
const NO_VIOLATIONS: readonly StrictViolation[] = Object.freeze([]);

/** A checker of `def`, its quick validator compiled on first use. */
function checker(def: string): Checker {
  return { def, quick: undefined };
}

/**
 * Loads one era's schema (`<era>.schema.json` in {@link SCHEMAS_DIR}) into its two ajv instances.
 * @returns undefined when there is no schema for `era`
 */
function loadEra(era: string): EraSchemas | undefined {
  let schema: { $defs?: Record<string, JsonObject>; definitions?: Record<string, JsonObject> };
  try {
    schema = JSON.parse(readFileSync(new URL(`${era}.schema.json`, SCHEMAS_DIR), 'utf8')) as typeof schema;
  } catch {
    return undefined;
  }
  const defsObj = schema.$defs ?? schema.definitions ?? {};
  const names = new Set(Object.keys(defsObj));
  const shared = schema.$defs === undefined || tracksNothing(schema);
  const make = (allErrors: boolean): Ajv => {
    const untracked = !allErrors && schema.$defs !== undefined && tracksNothing(schema);
    // The quick validators' errors are never reported (a refused message is checked again by the
    // full ones), so their calls of each other share one context instead of making one per call.
    const code = !allErrors && shared ? { process: shareSubContexts } : undefined;
    const a = schema.$defs ? new (untracked ? Ajv2020Untracked : Ajv2020)({ strict: false, allErrors, code }) : new Ajv({ strict: false, allErrors, code });
    if (code) (a as unknown as Record<typeof SHARED_CONTEXT_KEY, unknown>)[SHARED_CONTEXT_KEY] = TOP_LEVEL;
    addFormats(a);
    a.addSchema(schema, 'mcp');
    return a;
  };
  const byMethod = new Map<string, string>();
  for (const [name, def] of Object.entries(defsObj)) {
    const m = (def.properties as Record<string, { const?: string }> | undefined)?.method?.const;
    if (!m || /^(Client|Server|JSONRPC)/.test(name)) continue;
    if (name.endsWith('Request') || name.endsWith('Notification')) byMethod.set(m, name);
  }
  const has = (d: string): boolean => names.has(d);
  return {
    ajv: make(true),
    quick: make(false),
    defs: schema.$defs ? '$defs' : 'definitions',
    byMethod,
    has,
    compiled: new Map(),
    compiledQuick: new Map(),
    // Only $dynamicAnchor writes into the context's dynamicAnchors; a schema without it (draft-07 has none) shares one.
    quickCxt: shared ? TOP_LEVEL : undefined,
    resultEnvelope: checker(has('JSONRPCResultResponse') ? 'JSONRPCResultResponse' : 'JSONRPCResponse'),
    errorEnvelope: checker(has('JSONRPCErrorResponse') ? 'JSONRPCErrorResponse' : 'JSONRPCError'),
    inputRequired: has('InputRequiredResult') ? checker('InputRequiredResult') : undefined,
    plans: new Map(),
  };
}
