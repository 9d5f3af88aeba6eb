// compilePolicy and request.arguments: typed like the other fields, fail closed on an absent key,
// decisions that depend on arguments never remembered across arguments, the list's decision
// (shown when some arguments could be allowed), and failure lines that quote no argument value.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import type { Identity } from '../../src/core/identity.js';
import type { Component } from '../../src/core/interceptor.js';
import { compilePolicy, type PolicyConfig, type PolicyLog, type PolicyRequest } from '../../src/policy/index.js';

const rule = (name: string, when: string, effect: 'allow' | 'deny' = 'allow') => ({ name, effect, when });
const tool = (name: string): Component => ({ kind: 'tool', name, upstream: 'demo' });
const call = (args?: unknown, method = 'tools/call'): PolicyRequest => ({ method, era: '2026-07-28', mount: 'default', arguments: args });
const alice: Identity = { issuer: 'https://issuer.test', subject: 'alice', scopes: [], claims: { db: 'analytics' }, source: 'jwt' };

function policyOf(rules: PolicyConfig['rules'], def: 'allow' | 'deny' = 'deny', log?: PolicyLog) {
  return compilePolicy({ default: def, rules }, log ? { log } : {});
}

test('request.arguments is a typed map: the documented examples decide by argument value', () => {
  const p = policyOf(
    [
      rule('delete-needs-dry-run', 'component.name == "delete_repo" && request.arguments.dry_run != true', 'deny'),
      rule('no-metadata-fetch', 'component.name == "fetch" && request.arguments.url.startsWith("http://169.254.")', 'deny'),
      rule('analytics-only', 'component.name == "query" && request.arguments.database == principal.claims.db'),
      rule('others', '!(component.name in ["query"])'),
    ],
    'deny',
  );
  const d = (name: string, args?: unknown) => p.decide({ identity: alice, component: tool(name), request: call(args) });
  assert.deepEqual(d('delete_repo', { dry_run: true }), { allowed: true, rule: 'others' });
  assert.deepEqual(d('delete_repo', { dry_run: false }), { allowed: false, rule: 'delete-needs-dry-run' });
  assert.deepEqual(d('fetch', { url: 'http://169.254.169.254/latest' }), { allowed: false, rule: 'no-metadata-fetch' });
  assert.deepEqual(d('fetch', { url: 'https://example.com/' }), { allowed: true, rule: 'others' });
  assert.deepEqual(d('query', { database: 'analytics' }), { allowed: true, rule: 'analytics-only' });
  assert.deepEqual(d('query', { database: 'billing' }), { allowed: false });
  // JSON numbers compare with CEL ints; nested objects and lists are maps and lists.
  const q = policyOf([rule('n', 'request.arguments.n == 5 && request.arguments.o.k[0] == "v" && size(request.arguments) == 2')]);
  assert.equal(q.decide({ identity: alice, component: tool('t'), request: call({ n: 5, o: { k: ['v'] } }) }).allowed, true);
  // prompts/get arguments too; every other method sees an empty map.
  const r = policyOf([rule('style', 'request.arguments.style == "formal" || size(request.arguments) == 0')]);
  const prompt: Component = { kind: 'prompt', name: 'greeting', upstream: 'demo' };
  assert.equal(r.decide({ identity: alice, component: prompt, request: call({ style: 'formal' }, 'prompts/get') }).allowed, true);
  assert.equal(r.decide({ identity: alice, component: prompt, request: call({ style: 'casual' }, 'prompts/get') }).allowed, false);
  const readme: Component = { kind: 'resource', name: 'demo://readme', upstream: 'demo' };
  assert.equal(r.decide({ identity: alice, component: readme, request: call({ style: 'casual' }, 'resources/read') }).allowed, true);
  // Typed: a misspelt field of request is still a compile error; the map's value is dyn.
  assert.throws(
    () => compilePolicy({ default: 'deny', rules: [rule('x', 'request.argument.a == 1'), rule('y', 'request.arguments == 1')] }),
    (err: unknown) =>
      err instanceof SwitchyardError &&
      JSON.stringify(err.data?.errors) ===
        JSON.stringify([
          { path: '/policy/rules/0/when', message: 'No such key: argument (at character 9)' },
          { path: '/policy/rules/1/when', message: 'no such overload: map<string, dyn> == int (at character 1)' },
        ]),
  );
});

test('fail closed on an argument path: an absent key, or arguments that are not an object, match deny rules and no allow rule', () => {
  const warnings: object[] = [];
  const log: PolicyLog = { info() {}, warn: (o) => void warnings.push(o) };
  const deny = policyOf([rule('dry-run-only', 'request.arguments.dry_run != true', 'deny')], 'allow', log);
  const allow = policyOf([rule('analytics', 'request.arguments.database == "analytics"')], 'deny', log);
  for (const args of [{}, undefined, { other: 1 }, null, ['x'], 'str']) {
    assert.deepEqual(
      deny.decide({ identity: alice, component: tool('t'), request: call(args) }),
      { allowed: false, rule: 'dry-run-only' },
      JSON.stringify(args) ?? 'absent',
    );
    assert.deepEqual(allow.decide({ identity: alice, component: tool('t'), request: call(args) }), { allowed: false }, JSON.stringify(args) ?? 'absent');
  }
  assert.deepEqual(deny.decide({ identity: alice, component: tool('t'), request: call({ dry_run: true }) }), { allowed: true });
  assert.deepEqual(allow.decide({ identity: alice, component: tool('t'), request: call({ database: 'analytics' }) }), { allowed: true, rule: 'analytics' });
  // `has` and `in` guard an optional argument.
  const guarded = policyOf([rule('g', '!has(request.arguments.force) || request.arguments.force == false', 'allow')]);
  assert.equal(guarded.decide({ identity: alice, component: tool('t'), request: call({}) }).allowed, true);
  assert.equal(guarded.decide({ identity: alice, component: tool('t'), request: call({ force: true }) }).allowed, false);
  assert.deepEqual(warnings, [
    { rule: 'dry-run-only', effect: 'deny', error: 'No such key: dry_run (at character 19)' },
    { rule: 'analytics', effect: 'allow', error: 'No such key: database (at character 19)' },
  ]);
});

test('a decision that depends on arguments is not remembered for other arguments of the same principal and component', () => {
  const p = policyOf([rule('dry-run-only', 'component.name == "delete_repo" && request.arguments.dry_run != true', 'deny')], 'allow');
  const d = (args: unknown) => p.decide({ identity: alice, component: tool('delete_repo'), request: call(args) }).allowed;
  for (let i = 0; i < 3; i++) {
    assert.equal(d({ dry_run: true }), true);
    assert.equal(d({ dry_run: false }), false);
  }
  // Also when the arguments are read first and the component second.
  const q = policyOf([rule('x', 'request.arguments.a == 1 && component.name == "t"', 'allow')]);
  for (let i = 0; i < 3; i++) {
    assert.equal(q.decide({ identity: alice, component: tool('t'), request: call({ a: 1 }) }).allowed, true);
    assert.equal(q.decide({ identity: alice, component: tool('t'), request: call({ a: 2 }) }).allowed, false);
  }
  assert.equal(p.readsArguments, true);
  assert.equal(policyOf([rule('m', 'request.method == "tools/call" && request.era != "" && request.mount == "default"')]).readsArguments, false);
  assert.equal(policyOf([rule('m', 'request["arguments"].size() > 0')]).readsArguments, true);
});

test('lists: a tool is shown when some arguments could be allowed, hidden when a rule denies it whatever the arguments', () => {
  const p = policyOf(
    [
      rule('delete-needs-dry-run', 'component.name == "delete_repo" && request.arguments.dry_run != true', 'deny'),
      rule('no-drop', 'component.name == "drop" || request.arguments.force == true', 'deny'),
      rule('analytics-only', 'request.arguments.database == "analytics" && component.name == "query"'),
      rule('echo', 'component.name in ["echo", "delete_repo", "drop"]'),
    ],
    'deny',
  );
  const shown = (name: string) => p.visible({ identity: alice, component: tool(name), request: call() }).allowed;
  assert.deepEqual(
    ['delete_repo', 'drop', 'query', 'echo', 'other'].map((n) => [n, shown(n)]),
    [
      ['delete_repo', true],
      ['drop', false],
      ['query', true],
      ['echo', true],
      ['other', false],
    ],
  );
  // Without argument rules, visible is decide itself.
  const plain = policyOf([rule('echo', 'component.name == "echo"')]);
  const input = { identity: alice, component: tool('echo'), request: call() };
  assert.deepEqual([plain.readsArguments, plain.visible(input)], [false, plain.decide(input)]);
});

// Found by h-mutants: when the part of an argument-reading rule that does not read the arguments
// fails (here an absent claim in a `?:` condition), the rule fails whatever the arguments; a deny
// rule must then match (fail closed) in the decision made ahead of the arguments and in the list,
// as the full evaluation does. Treating that failure as "no match" let every argument through.
test('a deny rule whose argument-free part fails denies whatever the arguments, and hides the tool', () => {
  const p = policyOf([rule('free-tier-size', 'principal.claims.tier == "free" ? request.arguments.size > 10 : false', 'deny')], 'allow');
  const free: Identity = { ...alice, subject: 'fred', claims: { tier: 'free' } };
  const pro: Identity = { ...alice, subject: 'petra', claims: { tier: 'pro' } };
  const d = (who: Identity, args?: unknown) => p.decide({ identity: who, component: tool('resize'), request: call(args) });
  const shown = (who: Identity) => p.visible({ identity: who, component: tool('resize'), request: call() });
  assert.deepEqual(d(free, { size: 20 }), { allowed: false, rule: 'free-tier-size' });
  assert.deepEqual(d(free, { size: 5 }), { allowed: true });
  assert.deepEqual(d(pro, { size: 20 }), { allowed: true });
  assert.deepEqual([shown(free), shown(pro)], [{ allowed: true }, { allowed: true }]);
  // alice has no `tier` claim: the condition fails, so the rule fails for every argument.
  for (const args of [{ size: 20 }, { size: 5 }, {}]) assert.deepEqual(d(alice, args), { allowed: false, rule: 'free-tier-size' }, JSON.stringify(args));
  assert.deepEqual(shown(alice), { allowed: false, rule: 'free-tier-size' });
});

test('failure lines of a rule that reads arguments quote no argument value', () => {
  const warnings: object[] = [];
  const log: PolicyLog = { info() {}, warn: (o) => void warnings.push(o) };
  const secrets = { timeout: 'sk-SECRET-1', which: 'sk-SECRET-2', pattern: '(sk-SECRET-3' };
  // One rule per policy, so that each fails (a deny rule that fails decides at once).
  for (const when of [
    'duration(request.arguments.timeout) > duration("1h")',
    'request.arguments[request.arguments.which] == 1',
    'component.name.matches(request.arguments.pattern)',
  ])
    assert.equal(policyOf([rule('r', when, 'deny')], 'allow', log).decide({ identity: alice, component: tool('t'), request: call(secrets) }).allowed, false);
  assert.equal(warnings.length, 3);
  assert.doesNotMatch(JSON.stringify(warnings), /SECRET/);
  assert.match(JSON.stringify(warnings), /details withheld/);
});
