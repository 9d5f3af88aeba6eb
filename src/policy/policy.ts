// Authorization rules: CEL expressions over the verified principal, the component and the request, compiled once.

import { Environment, serialize, type ASTNode } from '@marcbachmann/cel-js';
import { RE2JS } from 're2js';
import type { Identity } from '../core/identity.js';
import { BoundedMemo } from '../core/memo.js';
import type { Component } from '../core/interceptor.js';
import { checkFragment, configError, type Effect, type PolicyConfig, type PolicyConfigIssue } from './config.js';
import { PolicyLines, resourceUriSpellings, type PolicyLog } from './components.js';

/** The request facts a rule sees as `request`. */
export interface PolicyRequest {
  /** JSON-RPC method of the invocation (`tools/call`, …; lists are decided as their invoking method). */
  method: string;
  /** The client's dialect id (`2026-07-28`, `2025-03-26`, `2024-11-05`); `""` when unknown. */
  era: string;
  /** The mount the request arrived on (`default` for a flag-configured gateway). */
  mount: string;
  /**
   * The invocation's `arguments` as the client sent them (`tools/call`, `prompts/get`), which is
   * what the upstream gets: rules see them as `request.arguments`. Read only for those two
   * methods; `undefined` is `{}`, and a value that is not an object makes every rule that reads
   * `request.arguments` fail (closed). Other methods always see `{}`.
   */
  arguments?: unknown;
}

/** What one decision is about. */
export interface PolicyInput {
  /** The verified caller; null when unauthenticated. */
  identity: Identity | null;
  /** The component, named as its upstream knows it. */
  component: Component;
  request: PolicyRequest;
}

/** The outcome of one decision. */
export interface Decision {
  allowed: boolean;
  /** The rule that decided; absent when the default applied. */
  rule?: string;
}

/** A compiled policy. */
export interface Policy {
  /** The decision when no rule matches. */
  readonly default: Effect;
  /** Whether denials answer with the unknown-name error. */
  readonly hideDenied: boolean;
  /** Rule names, in config order. */
  readonly rules: readonly string[];
  /**
   * Decides one invocation: a matching deny rule wins; else a matching allow rule allows; else
   * the default. A rule whose evaluation fails (an absent claim, a non-bool result, a bad regex)
   * counts as matching for deny and not matching for allow, and is reported once per rule on `log`.
   */
  decide(input: PolicyInput, log?: PolicyLog): Decision;
  /**
   * Decides whether a list shows a component (lists carry no arguments): as {@link decide}, but
   * for `tools/call` and `prompts/get` a rule whose outcome depends on `request.arguments` counts
   * as not matching for deny and as matching for allow, so a component is shown when some
   * arguments could be allowed, and hidden when a rule denies it whatever the arguments are.
   * Without such rules it is {@link decide} itself.
   */
  visible(input: PolicyInput, log?: PolicyLog): Decision;
  /** Whether some rule reads `request.arguments` (found in the rules' syntax trees when compiled). */
  readonly readsArguments: boolean;
}

/** Decisions remembered per identity object (and for anonymous callers); past it they are forgotten, not grown. */
export const MAX_DECISIONS_PER_PRINCIPAL = 1_024;

/** Options of {@link compilePolicy}. */
export interface CompilePolicyOptions {
  /** JSON Pointer of the policy in the config file, for error paths (default `/policy`). */
  path?: string;
  /** Where evaluation failures are reported when `decide` gets no log. */
  log?: PolicyLog;
}

/** One level of a {@link DecisionMemo}: the next level (or, at the last, the value) by one input string. */
type MemoLevel<V> = Map<string, MemoLevel<V> | V>;

/**
 * Decisions by their six input strings (component kind, name and upstream; request method, era
 * and mount), held in nested maps, one level per string, so that a lookup builds no key. At most
 * `max` decisions are held: past the bound the memory is emptied, never grown.
 */
class DecisionMemo<V = Decision> {
  readonly #root: MemoLevel<V> = new Map();
  #size = 0;

  /** @param max decisions held at most */
  constructor(readonly max: number) {}

  get(kind: string, name: string, upstream: string, method: string, era: string, mount: string): V | undefined {
    const l = (this.#root.get(kind) as MemoLevel<V> | undefined)?.get(name) as MemoLevel<V> | undefined;
    const m = ((l?.get(upstream) as MemoLevel<V> | undefined)?.get(method) as MemoLevel<V> | undefined)?.get(era) as MemoLevel<V> | undefined;
    return m?.get(mount) as V | undefined;
  }

  set(kind: string, name: string, upstream: string, method: string, era: string, mount: string, d: V): void {
    if (this.#size >= this.max) {
      this.#root.clear();
      this.#size = 0;
    }
    let at = this.#root;
    for (const k of [kind, name, upstream, method, era]) {
      let next = at.get(k) as MemoLevel<V> | undefined;
      if (next === undefined) at.set(k, (next = new Map()));
      at = next;
    }
    if (!at.has(mount)) this.#size++;
    at.set(mount, d);
  }
}

/** `principal` as rules see it: `client_id` is `""` when unknown; anonymous callers have `""` sub and iss. */
class CelPrincipal {
  constructor(
    readonly sub: string,
    readonly iss: string,
    readonly client_id: string,
    readonly scopes: readonly string[],
    readonly claims: ReadonlyMap<string, unknown>,
  ) {}
}

/** `component` as rules see it. */
class CelComponent {
  constructor(
    readonly kind: string,
    readonly name: string,
    readonly upstream: string,
  ) {}
}

/** `request` as rules see it; `arguments` is the invocation's, or {@link NO_ARGUMENTS}. */
class CelRequest {
  readonly arguments: unknown;
  constructor(
    readonly method: string,
    readonly era: string,
    readonly mount: string,
    args: unknown,
  ) {
    this.arguments = args;
  }
}

/** `request.arguments` of every method but `tools/call` and `prompts/get`, and of those when absent. */
const NO_ARGUMENTS: Readonly<Record<string, never>> = Object.freeze({});

/** The methods whose `arguments` rules see; every other method has {@link NO_ARGUMENTS}. */
const ARGUMENT_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get']);

const ANONYMOUS = new CelPrincipal('', '', '', [], new Map());

/**
 * The CEL environment: three typed variables (`request.arguments` a `map<string, dyn>`), so that a misspelt field (`principal.subject`)
 * is a compile error, not a rule that silently never matches. Values are handed in as instances
 * of the registered classes (no per-evaluation conversion).
 */
function environment(): Environment {
  return new Environment({ limits: { maxAstNodes: 2000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 } })
    .registerFunction(`string.${RE2_MATCHES}(string): bool`, (subject: string, pattern: string) => re2Of(pattern).matcher(subject).find())
    .registerType('Principal', {
      ctor: CelPrincipal,
      fields: { sub: 'string', iss: 'string', client_id: 'string', scopes: 'list<string>', claims: 'map<string, dyn>' },
    })
    .registerType('Component', { ctor: CelComponent, fields: { kind: 'string', name: 'string', upstream: 'string' } })
    .registerType('Request', { ctor: CelRequest, fields: { method: 'string', era: 'string', mount: 'string', arguments: 'map<string, dyn>' } })
    .registerVariable('principal', 'Principal')
    .registerVariable('component', 'Component')
    .registerVariable('request', 'Request');
}

/**
 * The name `matches` calls are compiled to: the same test on RE2 (linear time in the subject),
 * registered beside cel-js's own `matches`, which runs JavaScript's backtracking `RegExp`. A rule
 * is checked as written first, so its errors name `matches`.
 */
const RE2_MATCHES = 'swy_re2_matches';

/** Compiled RE2 patterns by source (rules and the claims they read repeat a few patterns). */
const re2Patterns = new BoundedMemo<RE2JS>(256);

/**
 * `pattern` compiled as RE2, remembered.
 * @throws Error `invalid RE2 pattern "…": <RE2's reason>` for a pattern RE2 does not accept
 *   (backreferences, lookaround, an unclosed group…)
 * @see https://github.com/google/cel-spec/blob/master/doc/langdef.md#regular-expressions (RE2 syntax)
 */
function re2Of(pattern: string): RE2JS {
  return re2Patterns.get(pattern, () => {
    try {
      return RE2JS.compile(pattern);
    } catch (err) {
      throw new Error(`invalid RE2 pattern ${JSON.stringify(pattern.slice(0, 200))}: ${(err as Error).message}`, { cause: err });
    }
  });
}

/**
 * Walks a parsed rule for `matches` calls (`s.matches(p)`, cel-js's only form). `each` gets every
 * such node; a literal pattern is passed as `literal`.
 */
function eachMatches(node: unknown, each: (call: { args: unknown[] }, literal: string | undefined) => void): void {
  if (Array.isArray(node)) {
    for (const n of node) eachMatches(n, each);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const n = node as { op?: unknown; args?: unknown };
  if (n.op === 'rcall' && Array.isArray(n.args) && n.args[0] === 'matches') {
    const arg = (n.args[2] as Array<{ op?: unknown; args?: unknown }> | undefined)?.[0];
    each(n as { args: unknown[] }, arg?.op === 'value' && typeof arg.args === 'string' ? arg.args : undefined);
  }
  eachMatches(n.args, each);
}

/**
 * Makes a parsed rule's `matches` run on RE2, as the CEL specification defines it: cel-js runs
 * JavaScript's backtracking `RegExp`, where a pattern such as `^(a+)+$` takes exponential time on a
 * name a client chose (seconds for 30 characters, the event loop blocked). Checks every literal
 * pattern at compile time.
 * @throws Error naming the first literal pattern RE2 does not accept (see {@link re2Of})
 * @see https://github.com/google/cel-spec/blob/master/doc/langdef.md#regular-expressions
 */
function matchesOnRe2(ast: ASTNode): void {
  eachMatches(ast, (call, literal) => {
    if (literal !== undefined) re2Of(literal);
    call.args[0] = RE2_MATCHES;
  });
}

/** Fields of `request` that are not its arguments. */
const PLAIN_REQUEST_FIELDS: ReadonlySet<string> = new Set(['method', 'era', 'mount']);

/**
 * Whether a parsed expression may read `request.arguments`: wherever `request` appears other than
 * as `request.method`, `request.era` or `request.mount`. Conservative: `request["arguments"]`, or
 * a comprehension variable named `request`, count as reading them.
 */
function readsArguments(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(readsArguments);
  if (node === null || typeof node !== 'object') return false;
  const n = node as { op?: unknown; args?: unknown };
  if (n.op === 'id') return n.args === 'request';
  if ((n.op === '.' || n.op === '.?') && Array.isArray(n.args)) {
    const [obj, field] = n.args as [{ op?: unknown; args?: unknown } | undefined, unknown];
    if (obj?.op === 'id' && obj.args === 'request' && typeof field === 'string' && PLAIN_REQUEST_FIELDS.has(field)) return false;
  }
  return readsArguments(n.args);
}

/** The field names and string literals a rule is written with (its failures may name them in logs). */
function wordsOf(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const n of node) wordsOf(n, into);
  } else if (node !== null && typeof node === 'object') {
    const n = node as { op?: unknown; args?: unknown };
    if (n.op === 'value' && typeof n.args === 'string') into.add(n.args);
    else if ((n.op === '.' || n.op === '.?') && Array.isArray(n.args) && typeof n.args[1] === 'string') into.add(n.args[1]);
    wordsOf(n.args, into);
  }
  return into;
}

/**
 * What a rule comes to whatever `request.arguments` holds: it holds (`T`), does not (`F`), fails
 * (`E`, which CEL's `&&`/`||` absorb like the value that the other side decides), or depends on
 * the arguments (`U`).
 */
const T = 0;
const F = 1;
const E = 2;
const U = 3;
type Outcome = typeof T | typeof F | typeof E | typeof U;
type PartialRule = (vars: Record<string, unknown>) => Outcome;

/**
 * A rule's outcome over every possible `request.arguments`, from its syntax tree: the `&&`, `||`,
 * `!` and `?:` that combine its parts are followed (with CEL's error absorption), a part that does
 * not read the arguments is evaluated as its own expression (compiled by `leaf`), and any other
 * part that reads them is `U`.
 */
function partialOf(node: ASTNode, leaf: (node: ASTNode) => (vars: Record<string, unknown>) => unknown, fail: (err: unknown) => void): PartialRule {
  if (!readsArguments(node)) {
    const run = leaf(node);
    return (vars) => {
      try {
        const v = run(vars);
        return v === true ? T : v === false ? F : E;
      } catch (err) {
        fail(err);
        return E;
      }
    };
  }
  const n = node as { op: string; args: unknown };
  if ((n.op === '&&' || n.op === '||') && Array.isArray(n.args) && n.args.length === 2) {
    const [a, b] = (n.args as ASTNode[]).map((x) => partialOf(x, leaf, fail));
    const ands = n.op === '&&';
    const decides = ands ? F : T;
    const passes = ands ? T : F;
    return (vars) => {
      const x = a(vars);
      if (x === decides) return decides;
      const y = b(vars);
      if (y === decides) return decides;
      if (x === U || y === U) return U;
      return x === passes && y === passes ? passes : E;
    };
  }
  if (n.op === '!_') {
    const a = partialOf(n.args as ASTNode, leaf, fail);
    return (vars) => {
      const x = a(vars);
      return x === T ? F : x === F ? T : x;
    };
  }
  if (n.op === '?:' && Array.isArray(n.args) && n.args.length === 3) {
    const [c, a, b] = (n.args as ASTNode[]).map((x) => partialOf(x, leaf, fail));
    return (vars) => {
      const x = c(vars);
      if (x === T) return a(vars);
      if (x === F) return b(vars);
      if (x === E) return E;
      const y = a(vars);
      return y !== U && y === b(vars) ? y : U;
    };
  }
  return () => U;
}

/**
 * `compute` remembered per identity object (which lives as long as its cached token or session;
 * anonymous callers share one memory) and per input, at most {@link MAX_DECISIONS_PER_PRINCIPAL}
 * values per identity. Sound because what it computes depends only on its input (CEL has no clock
 * or I/O). `defaultLog` is the log when the caller names none.
 */
function rememberedPerInput<V>(
  compute: (input: PolicyInput, log: PolicyLog | undefined) => V,
  defaultLog: PolicyLog | undefined,
): (input: PolicyInput, log?: PolicyLog) => V {
  const byIdentity = new WeakMap<Identity, DecisionMemo<V>>();
  const anonymous = new DecisionMemo<V>(MAX_DECISIONS_PER_PRINCIPAL);
  return (input, log = defaultLog) => {
    const { component: c, request: r } = input;
    let seen = input.identity === null ? anonymous : byIdentity.get(input.identity);
    if (seen === undefined) byIdentity.set(input.identity!, (seen = new DecisionMemo<V>(MAX_DECISIONS_PER_PRINCIPAL)));
    let v = seen.get(c.kind, c.name, c.upstream, r.method, r.era, r.mount);
    if (v === undefined) seen.set(c.kind, c.name, c.upstream, r.method, r.era, r.mount, (v = compute(input, log)));
    return v;
  };
}

interface CompiledRule {
  name: string;
  deny: boolean;
  run: (ctx: Record<string, unknown>) => unknown;
  reported: boolean;
  /** Set for a rule that may read `request.arguments`: its outcome whatever they hold. */
  partial?: PartialRule;
  /** Set for a rule that may read `request.arguments`: the words its logged failures may name. */
  words?: ReadonlySet<string>;
}

/** A CEL error's own text (without the source excerpt cel-js appends) and where in `when` it is. */
function celMessage(err: unknown): string {
  const e = err as { summary?: string; message?: string; range?: { start: number } };
  const text = e.summary ?? e.message ?? String(err);
  return e.range ? `${text} (at character ${e.range.start + 1})` : text;
}

/** A rule whose result is not a bool (a `dyn` that held something else). */
class NotBoolResult extends Error {}

/**
 * The `error` field of a rule's failure line. A rule that reads `request.arguments` may fail
 * with a message that quotes them (`Invalid duration string: <value>`, `No such key: <value>` for
 * a key read from the arguments, a pattern taken from them), and arguments may hold secrets: its
 * line keeps only `No such key: K` where K is written in the rule, else the CEL error code.
 */
function failureText(rule: CompiledRule, err: unknown): string {
  if (!rule.words || err instanceof NotBoolResult) return celMessage(err);
  const e = err as { code?: unknown; summary?: unknown; range?: { start: number } };
  const key = typeof e.summary === 'string' ? /^No such key: (.*)$/s.exec(e.summary)?.[1] : undefined;
  if (key !== undefined && rule.words.has(key)) return celMessage(err);
  const at = e.range ? ` (at character ${e.range.start + 1})` : '';
  return `${typeof e.code === 'string' ? e.code : 'evaluation failed'}${at}; details withheld (the rule reads request.arguments)`;
}

/** A rule as {@link ruleIssues} reads it; `undefined` stands for one not well-formed enough to compile. */
export type RuleSource = { readonly name?: unknown; readonly effect?: unknown; readonly when: string } | undefined;

/**
 * Parses and type-checks each rule's `when` once, and finds duplicate names (only string names
 * take part), pushing each failure onto `issues` with its path under `base`; `undefined` entries
 * are skipped, their indices kept. `report` gets a rule's evaluation failures later.
 */
function compileRules(
  rules: readonly RuleSource[],
  base: string,
  issues: PolicyConfigIssue[],
  report: (rule: CompiledRule, err: unknown) => void,
): CompiledRule[] {
  const env = environment();
  const compiled: CompiledRule[] = [];
  const seen = new Map<string, number>();
  rules.forEach((r, i) => {
    if (r === undefined) return;
    if (typeof r.name === 'string') {
      const first = seen.get(r.name);
      if (first !== undefined) issues.push({ path: `${base}/rules/${i}/name`, message: `duplicate rule name ${r.name} (also ${base}/rules/${first}/name)` });
      else seen.set(r.name, i);
    }
    try {
      const written = env.parse(r.when);
      const checked = written.check();
      if (!checked.valid) throw checked.error ?? new Error('not a valid expression');
      if (checked.type !== 'bool' && checked.type !== 'dyn') throw new Error(`must be a bool expression, not ${checked.type}`);
      // Parsed again and rewritten before its first check (cel-js resolves a call's overload then).
      const parsed = env.parse(r.when);
      matchesOnRe2(parsed.ast);
      const recheck = parsed.check();
      if (!recheck.valid) throw recheck.error ?? new Error('not a valid expression');
      const rule: CompiledRule = { name: String(r.name), deny: r.effect === 'deny', run: parsed, reported: false };
      if (readsArguments(written.ast)) {
        rule.words = wordsOf(written.ast);
        const leaf = (node: ASTNode) => {
          const part = env.parse(serialize(node));
          matchesOnRe2(part.ast);
          const ok = part.check();
          if (!ok.valid) throw ok.error ?? new Error('not a valid expression');
          return part;
        };
        try {
          rule.partial = partialOf(written.ast, leaf, (err) => report(rule, err));
        } catch {
          // A part that does not compile on its own: the rule is taken to depend on the arguments.
          rule.partial = () => U;
        }
      }
      compiled.push(rule);
    } catch (err) {
      issues.push({ path: `${base}/rules/${i}/when`, message: celMessage(err) });
    }
  });
  return compiled;
}

/**
 * The compile errors of policy rules in a config the schema refused, so that `switchyard
 * validate`, the start and a refused reload list them with the schema's errors in one run (the
 * config loader calls it; a config that passes is compiled by {@link compilePolicy} when the
 * gateway assembles). Each rule's `when` is parsed and type-checked and names are compared as
 * {@link compilePolicy} does, with the same messages; nothing is kept.
 * @param rules a policy's `rules` as written, after coercion; an entry not well-formed enough to
 *   compile (not an object, or a `when` that is not a string or that the schema refused) is
 *   `undefined` and skipped, the others keeping their index.
 * @param base JSON Pointer of the policy in the config file (`/policy`, `/upstreams/NAME/policy`).
 * @returns the failing paths (`BASE/rules/I/when`, `BASE/rules/I/name`), empty when all compile.
 * @see RFC 6901 (JSON Pointer paths)
 */
export function ruleIssues(rules: readonly RuleSource[], base: string): PolicyConfigIssue[] {
  const issues: PolicyConfigIssue[] = [];
  compileRules(rules, base, issues, () => {});
  return issues;
}

/**
 * Compiles a policy: every rule's CEL expression is parsed and type-checked once.
 * Variables: `principal` { sub, iss, client_id, scopes (list), claims (map) }, `component`
 * { kind: 'tool'|'prompt'|'resource'|'resource-template', name (name or URI), upstream },
 * `request` { method, era (dialect id), mount, arguments (map: a `tools/call`'s or `prompts/get`'s
 * `arguments`, `{}` for other methods) }. Rules that read `request.arguments` are found in the
 * syntax trees: without any, a decision is remembered per principal and input as always; with
 * some, a `tools/call` or `prompts/get` decision is remembered only when no such rule could
 * change it for that input, and is otherwise evaluated on each request's arguments.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID listing every failing path, e.g.
 *   `/policy/rules/2/when: Unexpected token: EOF (at character 17)`, duplicate rule names, and
 *   schema violations; `data: { source: 'policy', errors: [{ path, message }] }`
 * @see https://github.com/google/cel-spec (the language); RFC 6901 (JSON Pointer paths)
 */
export function compilePolicy(config: PolicyConfig, opts: CompilePolicyOptions = {}): Policy {
  const base = opts.path ?? '/policy';
  const cfg = checkFragment<Required<PolicyConfig>>('policy', config, base);
  const issues: PolicyConfigIssue[] = [];
  const compiled = compileRules(cfg.rules, base, issues, (rule, err) => report(rule, err));
  if (issues.length > 0) throw configError(issues);

  const principals = new WeakMap<Identity, CelPrincipal>();
  const principalOf = (id: Identity | null): CelPrincipal => {
    if (id === null) return ANONYMOUS;
    let p = principals.get(id);
    if (!p) {
      p = new CelPrincipal(id.subject, id.issuer, id.clientId ?? '', [...id.scopes], new Map(Object.entries(id.claims)));
      principals.set(id, p);
    }
    return p;
  };

  /** Logs a rule's first evaluation failure (argument values withheld, see {@link failureText}). */
  let failLog: PolicyLog | undefined;
  function report(rule: CompiledRule, err: unknown): void {
    if (rule.reported) return;
    rule.reported = true;
    failLog?.warn({ rule: rule.name, effect: rule.deny ? 'deny' : 'allow', error: failureText(rule, err) }, PolicyLines.ruleFailed);
  }
  /** True when the rule matches; a failure matches deny rules and not allow rules (fail closed). */
  const matches = (rule: CompiledRule, vars: Record<string, unknown>, log: PolicyLog | undefined): boolean => {
    let err: unknown;
    try {
      const out = rule.run(vars);
      if (typeof out === 'boolean') return out;
      err = new NotBoolResult(`result is ${typeof out}, not bool`);
    } catch (e) {
      err = e;
    }
    if (!rule.reported) {
      failLog = log;
      report(rule, err);
    }
    return rule.deny;
  };

  const denies = compiled.filter((r) => r.deny);
  const allows = compiled.filter((r) => !r.deny);
  const anyReadsArguments = compiled.some((r) => r.partial !== undefined);
  const varsOf = (input: PolicyInput, name: string, args: unknown) => {
    const { component: c, request: r } = input;
    return {
      principal: principalOf(input.identity),
      component: new CelComponent(c.kind, name, c.upstream),
      request: new CelRequest(r.method, r.era, r.mount, args),
    };
  };
  const evaluateAs = (input: PolicyInput, name: string, log: PolicyLog | undefined, args: unknown = NO_ARGUMENTS): Decision => {
    const vars = varsOf(input, name, args);
    for (const r of denies) if (matches(r, vars, log)) return { allowed: false, rule: r.name };
    for (const r of allows) if (matches(r, vars, log)) return { allowed: true, rule: r.name };
    return { allowed: cfg.default === 'allow' };
  };
  // A resource is allowed only when every spelling an upstream may read its URI as is allowed
  // (resourceUriSpellings): otherwise `DEMO://x` would pass a deny rule written for `demo://x`.
  const evaluate = (input: PolicyInput, log: PolicyLog | undefined): Decision => {
    const d = evaluateAs(input, input.component.name, log);
    if (!d.allowed || input.component.kind !== 'resource') return d;
    for (const name of resourceUriSpellings(input.component.name).slice(1)) {
      const other = evaluateAs(input, name, log);
      if (!other.allowed) return other;
    }
    return d;
  };
  // A decision depends only on its input (CEL has no clock or I/O), so it is remembered per
  // identity object (which lives as long as its cached token or session) and per input, bounded.
  const decide = rememberedPerInput(evaluate, opts.log);
  if (!anyReadsArguments)
    return Object.freeze({
      default: cfg.default,
      hideDenied: cfg.hideDenied,
      rules: Object.freeze(compiled.map((r) => r.name)),
      readsArguments: false,
      decide,
      visible: decide,
    });

  /**
   * For a `tools/call` or `prompts/get` input, what the rules decide whatever the arguments:
   * `invocation` is the decision when no rule that reads them could change it (else undefined:
   * evaluate each request), `listing` the list's decision (a rule that depends on them counts as
   * not matching for deny and as matching for allow).
   */
  const outlook = (input: PolicyInput, log: PolicyLog | undefined): ArgumentOutlook => {
    const vars = varsOf(input, input.component.name, NO_ARGUMENTS);
    failLog = log;
    // Rule by rule, in the order decide() tries them: definite (matches or not) or depends.
    const outcome = (rule: CompiledRule): Outcome => {
      if (!rule.partial) return matches(rule, vars, log) ? T : F;
      const o = rule.partial(vars);
      return o === U ? U : o === T || (o === E && rule.deny) ? T : F;
    };
    let invocation: Decision | undefined | null = null;
    let listing: Decision | undefined;
    for (const rule of denies) {
      const o = outcome(rule);
      if (o === U && invocation === null) invocation = undefined;
      if (o === T) {
        if (invocation === null) invocation = { allowed: false, rule: rule.name };
        listing = { allowed: false, rule: rule.name };
        break;
      }
    }
    if (listing === undefined)
      for (const rule of allows) {
        const o = outcome(rule);
        if (o === F) continue;
        if (invocation === null) invocation = o === T ? { allowed: true, rule: rule.name } : undefined;
        listing = { allowed: true, rule: rule.name };
        break;
      }
    const fallback = { allowed: cfg.default === 'allow' };
    return { invocation: invocation === null ? fallback : invocation, listing: listing ?? fallback };
  };
  const outlookOf = rememberedPerInput(outlook, opts.log);
  return Object.freeze({
    default: cfg.default,
    hideDenied: cfg.hideDenied,
    rules: Object.freeze(compiled.map((r) => r.name)),
    readsArguments: true,
    decide(input: PolicyInput, log: PolicyLog | undefined = opts.log): Decision {
      if (!ARGUMENT_METHODS.has(input.request.method)) return decide(input, log);
      // Resources are not invoked by these methods, so one spelling is the whole decision.
      const args = input.request.arguments;
      return outlookOf(input, log).invocation ?? evaluateAs(input, input.component.name, log, args === undefined ? NO_ARGUMENTS : args);
    },
    visible(input: PolicyInput, log: PolicyLog | undefined = opts.log): Decision {
      return ARGUMENT_METHODS.has(input.request.method) ? outlookOf(input, log).listing : decide(input, log);
    },
  });
}

/** What an argument-reading policy decides for one input whatever the arguments (see `outlook` in {@link compilePolicy}). */
interface ArgumentOutlook {
  /** The decision of an invocation when the arguments cannot change it; undefined when they can. */
  invocation: Decision | undefined;
  /** Whether a list shows the component. */
  listing: Decision;
}
