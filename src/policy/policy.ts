// Authorization rules: CEL expressions over the verified principal, the component and the request, compiled once.

import { Environment, type ASTNode } from '@marcbachmann/cel-js';
import { RE2JS } from 're2js';
import type { Identity } from '../core/identity.js';
import { BoundedMemo } from '../core/memo.js';
import type { Component } from '../core/interceptor.js';
import { checkFragment, configError, type Effect, type PolicyConfig, type PolicyConfigIssue, type PolicyRuleConfig } from './config.js';
import { PolicyLines, resourceUriSpellings, type PolicyLog } from './components.js';

/** The request facts a rule sees as `request`. */
export interface PolicyRequest {
  /** JSON-RPC method of the invocation (`tools/call`, …; lists are decided as their invoking method). */
  method: string;
  /** The client's dialect id (`2026-07-28`, `2025-03-26`, `2024-11-05`); `""` when unknown. */
  era: string;
  /** The mount the request arrived on (`default` for a flag-configured gateway). */
  mount: string;
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

/** One level of a {@link DecisionMemo}: the next level (or, at the last, the decision) by one input string. */
type MemoLevel = Map<string, MemoLevel | Decision>;

/**
 * Decisions by their six input strings (component kind, name and upstream; request method, era
 * and mount), held in nested maps, one level per string, so that a lookup builds no key. At most
 * `max` decisions are held: past the bound the memory is emptied, never grown.
 */
class DecisionMemo {
  readonly #root: MemoLevel = new Map();
  #size = 0;

  /** @param max decisions held at most */
  constructor(readonly max: number) {}

  get(kind: string, name: string, upstream: string, method: string, era: string, mount: string): Decision | undefined {
    const l = (this.#root.get(kind) as MemoLevel | undefined)?.get(name) as MemoLevel | undefined;
    const m = ((l?.get(upstream) as MemoLevel | undefined)?.get(method) as MemoLevel | undefined)?.get(era) as MemoLevel | undefined;
    return m?.get(mount) as Decision | undefined;
  }

  set(kind: string, name: string, upstream: string, method: string, era: string, mount: string, d: Decision): void {
    if (this.#size >= this.max) {
      this.#root.clear();
      this.#size = 0;
    }
    let at = this.#root;
    for (const k of [kind, name, upstream, method, era]) {
      let next = at.get(k) as MemoLevel | undefined;
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

/** `request` as rules see it. */
class CelRequest {
  constructor(
    readonly method: string,
    readonly era: string,
    readonly mount: string,
  ) {}
}

const ANONYMOUS = new CelPrincipal('', '', '', [], new Map());

/**
 * The CEL environment: three typed variables, so that a misspelt field (`principal.subject`)
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
    .registerType('Request', { ctor: CelRequest, fields: { method: 'string', era: 'string', mount: 'string' } })
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

interface CompiledRule {
  name: string;
  deny: boolean;
  run: (ctx: Record<string, unknown>) => unknown;
  reported: boolean;
}

/** A CEL error's own text (without the source excerpt cel-js appends) and where in `when` it is. */
function celMessage(err: unknown): string {
  const e = err as { summary?: string; message?: string; range?: { start: number } };
  const text = e.summary ?? e.message ?? String(err);
  return e.range ? `${text} (at character ${e.range.start + 1})` : text;
}

/**
 * Compiles a policy: every rule's CEL expression is parsed and type-checked once.
 * Variables: `principal` { sub, iss, client_id, scopes (list), claims (map) }, `component`
 * { kind: 'tool'|'prompt'|'resource'|'resource-template', name (name or URI), upstream },
 * `request` { method, era (dialect id), mount }.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID listing every failing path, e.g.
 *   `/policy/rules/2/when: Unexpected token: EOF (at character 17)`, duplicate rule names, and
 *   schema violations; `data: { source: 'policy', errors: [{ path, message }] }`
 * @see https://github.com/google/cel-spec (the language); RFC 6901 (JSON Pointer paths)
 */
export function compilePolicy(config: PolicyConfig, opts: CompilePolicyOptions = {}): Policy {
  const base = opts.path ?? '/policy';
  const cfg = checkFragment<Required<PolicyConfig>>('policy', config, base);
  const env = environment();
  const issues: PolicyConfigIssue[] = [];
  const compiled: CompiledRule[] = [];
  const seen = new Map<string, number>();
  cfg.rules.forEach((r: PolicyRuleConfig, i) => {
    const first = seen.get(r.name);
    if (first !== undefined) issues.push({ path: `${base}/rules/${i}/name`, message: `duplicate rule name ${r.name} (also ${base}/rules/${first}/name)` });
    else seen.set(r.name, i);
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
      compiled.push({ name: r.name, deny: r.effect === 'deny', run: parsed, reported: false });
    } catch (err) {
      issues.push({ path: `${base}/rules/${i}/when`, message: celMessage(err) });
    }
  });
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

  /** True when the rule matches; a failure matches deny rules and not allow rules (fail closed). */
  const matches = (rule: CompiledRule, vars: Record<string, unknown>, log: PolicyLog | undefined): boolean => {
    let err: unknown;
    try {
      const out = rule.run(vars);
      if (typeof out === 'boolean') return out;
      err = new Error(`result is ${typeof out}, not bool`);
    } catch (e) {
      err = e;
    }
    if (!rule.reported) {
      rule.reported = true;
      log?.warn({ rule: rule.name, effect: rule.deny ? 'deny' : 'allow', error: celMessage(err) }, PolicyLines.ruleFailed);
    }
    return rule.deny;
  };

  const denies = compiled.filter((r) => r.deny);
  const allows = compiled.filter((r) => !r.deny);
  const evaluateAs = (input: PolicyInput, name: string, log: PolicyLog | undefined): Decision => {
    const { component: c, request: r } = input;
    const vars = {
      principal: principalOf(input.identity),
      component: new CelComponent(c.kind, name, c.upstream),
      request: new CelRequest(r.method, r.era, r.mount),
    };
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
  const memo = new WeakMap<Identity, DecisionMemo>();
  const anonymous = new DecisionMemo(MAX_DECISIONS_PER_PRINCIPAL);
  return Object.freeze({
    default: cfg.default,
    hideDenied: cfg.hideDenied,
    rules: Object.freeze(compiled.map((r) => r.name)),
    decide(input: PolicyInput, log: PolicyLog | undefined = opts.log): Decision {
      const { component: c, request: r } = input;
      let seen = input.identity === null ? anonymous : memo.get(input.identity);
      if (seen === undefined) memo.set(input.identity!, (seen = new DecisionMemo(MAX_DECISIONS_PER_PRINCIPAL)));
      let d = seen.get(c.kind, c.name, c.upstream, r.method, r.era, r.mount);
      if (d === undefined) seen.set(c.kind, c.name, c.upstream, r.method, r.era, r.mount, (d = evaluate(input, log)));
      return d;
    },
  });
}
