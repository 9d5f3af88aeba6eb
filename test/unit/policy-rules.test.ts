// compilePolicy: CEL compile errors name the rule's JSON path, the evaluation order (deny wins,
// then allow, then the default), the variables rules see, fail-closed evaluation.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import type { Identity } from '../../src/core/identity.js';
import type { Component } from '../../src/core/interceptor.js';
import { compilePolicy, type PolicyConfig, type PolicyLog, type PolicyRequest } from '../../src/policy/index.js';
import { MAX_DECISIONS_PER_PRINCIPAL } from '../../src/policy/policy.js';

function configErrors(config: unknown, path?: string): unknown {
  try {
    compilePolicy(config as PolicyConfig, path === undefined ? {} : { path });
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    return { message: err.message, data: err.data };
  }
  assert.fail('expected a config error');
}

const rule = (name: string, when: string, effect: 'allow' | 'deny' = 'allow') => ({ name, effect, when });

test('a rule that does not compile is a config error naming its JSON path and the CEL message', () => {
  assert.deepEqual(
    configErrors({
      default: 'deny',
      rules: [
        rule('ok', 'principal.sub == "a"'),
        rule('syntax', 'principal.sub =='),
        rule('typo', 'principal.subject == "a"'),
        rule('not-bool', 'component.name'),
        rule('types', 'component.name.startsWith(1)'),
      ],
    }),
    {
      message:
        "Invalid configuration: policy: 4 errors: /policy/rules/1/when: Unexpected token: EOF (at character 17); /policy/rules/2/when: No such key: subject (at character 11); /policy/rules/3/when: must be a bool expression, not string; /policy/rules/4/when: found no matching overload for 'string.startsWith(int)' (at character 1)",
      data: {
        source: 'policy',
        errors: [
          { path: '/policy/rules/1/when', message: 'Unexpected token: EOF (at character 17)' },
          { path: '/policy/rules/2/when', message: 'No such key: subject (at character 11)' },
          { path: '/policy/rules/3/when', message: 'must be a bool expression, not string' },
          { path: '/policy/rules/4/when', message: "found no matching overload for 'string.startsWith(int)' (at character 1)" },
        ],
      },
    },
  );
});

test('the config is checked against the schema fragment first; paths follow the given base', () => {
  assert.deepEqual(configErrors({ hideDenied: 'yes', rules: [{ name: 'a b', effect: 'maybe', when: '' }], extra: 1 }, '/mounts/x/policy'), {
    message:
      'Invalid configuration: policy: 6 errors: /mounts/x/policy/default: is required; /mounts/x/policy/extra: unknown key; /mounts/x/policy/hideDenied: must be boolean; /mounts/x/policy/rules/0/name: must match pattern "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"; /mounts/x/policy/rules/0/effect: must be one of "allow", "deny"; /mounts/x/policy/rules/0/when: must NOT have fewer than 1 characters',
    data: {
      source: 'policy',
      errors: [
        { path: '/mounts/x/policy/default', message: 'is required' },
        { path: '/mounts/x/policy/extra', message: 'unknown key' },
        { path: '/mounts/x/policy/hideDenied', message: 'must be boolean' },
        { path: '/mounts/x/policy/rules/0/name', message: 'must match pattern "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"' },
        { path: '/mounts/x/policy/rules/0/effect', message: 'must be one of "allow", "deny"' },
        { path: '/mounts/x/policy/rules/0/when', message: 'must NOT have fewer than 1 characters' },
      ],
    },
  });
  assert.deepEqual(configErrors({ default: 'allow', rules: [rule('a', 'true'), rule('b', 'true'), rule('a', 'false')] }), {
    message: 'Invalid configuration: policy: 1 error: /policy/rules/2/name: duplicate rule name a (also /policy/rules/0/name)',
    data: { source: 'policy', errors: [{ path: '/policy/rules/2/name', message: 'duplicate rule name a (also /policy/rules/0/name)' }] },
  });
});

const tool = (name: string, upstream = 'demo'): Component => ({ kind: 'tool', name, upstream });
const req = (method = 'tools/call', era = '2026-07-28', mount = 'default'): PolicyRequest => ({ method, era, mount });
const alice: Identity = {
  issuer: 'https://issuer.test',
  subject: 'alice',
  clientId: 'cli',
  scopes: ['tools:read', 'tools:call'],
  claims: { groups: ['eng', 'ops'], level: 3, org: { name: 'acme' } },
  source: 'jwt',
};

test('evaluation order: a matching deny wins, else a matching allow, else the default; rule order does not matter', () => {
  for (const rules of [
    [rule('allow-all', 'true'), rule('deny-add', 'component.name == "add"', 'deny')],
    [rule('deny-add', 'component.name == "add"', 'deny'), rule('allow-all', 'true')],
  ]) {
    const p = compilePolicy({ default: 'deny', rules });
    assert.deepEqual(p.decide({ identity: alice, component: tool('add'), request: req() }), { allowed: false, rule: 'deny-add' });
    assert.deepEqual(p.decide({ identity: alice, component: tool('echo'), request: req() }), { allowed: true, rule: 'allow-all' });
  }
  const defaults = (d: 'allow' | 'deny') => compilePolicy({ default: d, rules: [rule('never', 'false'), rule('never-deny', 'false', 'deny')] });
  assert.deepEqual(defaults('allow').decide({ identity: null, component: tool('x'), request: req() }), { allowed: true });
  assert.deepEqual(defaults('deny').decide({ identity: null, component: tool('x'), request: req() }), { allowed: false });
  const p = compilePolicy({ default: 'allow' });
  assert.deepEqual([p.default, p.hideDenied, p.rules], ['allow', false, []]);
});

test('variables: principal (sub, iss, client_id, scopes, claims), component, request', () => {
  const holds = (when: string, identity: Identity | null = alice, component: Component = tool('add'), request: PolicyRequest = req()) =>
    compilePolicy({ default: 'deny', rules: [rule('r', when)] }).decide({ identity, component, request }).allowed;
  assert.equal(holds('principal.sub == "alice" && principal.iss == "https://issuer.test" && principal.client_id == "cli"'), true);
  assert.equal(holds('"tools:call" in principal.scopes && principal.scopes.size() == 2'), true);
  assert.equal(holds('"ops" in principal.claims.groups && principal.claims.level >= 3 && principal.claims.org.name == "acme"'), true);
  assert.equal(holds('has(principal.claims.missing)'), false);
  assert.equal(holds('"level" in principal.claims'), true);
  assert.equal(
    holds('component.kind == "prompt" && component.name == "greeting" && component.upstream == "gh"', alice, {
      kind: 'prompt',
      name: 'greeting',
      upstream: 'gh',
    }),
    true,
  );
  assert.equal(holds('component.name.matches("^demo://items/[a-z]+$")', alice, { kind: 'resource', name: 'demo://items/alpha', upstream: 'demo' }), true);
  assert.equal(
    holds(
      'request.method == "prompts/get" && request.era == "2025-03-26" && request.mount == "public"',
      alice,
      tool('x'),
      req('prompts/get', '2025-03-26', 'public'),
    ),
    true,
  );
  // Anonymous callers: empty sub, iss and client_id, no scopes, no claims.
  assert.equal(
    holds('principal.sub == "" && principal.iss == "" && principal.client_id == "" && size(principal.scopes) == 0 && size(principal.claims) == 0', null),
    true,
  );
  // A principal without a client id has "" there, so comparisons evaluate instead of failing.
  assert.equal(holds('principal.client_id != "evil"', { ...alice, clientId: undefined }), true);
});

test('fail closed: an erroring deny rule matches, an erroring allow rule does not; each is reported once', () => {
  const warnings: Array<[object, string]> = [];
  const log: PolicyLog = { info() {}, warn: (o, m) => void warnings.push([o, m]) };
  const p = compilePolicy({
    default: 'allow',
    rules: [rule('bad-regex', 'component.name.matches(principal.claims.pattern)', 'deny'), rule('non-bool', 'principal.claims.level', 'allow')],
  });
  const anyone: Identity = { ...alice, claims: { pattern: '(', level: 'high' } };
  for (let i = 0; i < 3; i++)
    assert.deepEqual(p.decide({ identity: anyone, component: tool('add'), request: req() }, log), { allowed: false, rule: 'bad-regex' });
  const q = compilePolicy({ default: 'deny', rules: [rule('non-bool', 'principal.claims.level', 'allow')] }, { log });
  for (let i = 0; i < 3; i++) assert.deepEqual(q.decide({ identity: anyone, component: tool('add'), request: req() }), { allowed: false });
  assert.deepEqual(warnings, [
    [{ rule: 'bad-regex', effect: 'deny', error: 'invalid RE2 pattern "(": error parsing regexp: missing closing ): `(`' }, 'policy rule failed to evaluate'],
    [{ rule: 'non-bool', effect: 'allow', error: 'result is string, not bool' }, 'policy rule failed to evaluate'],
  ]);
});

// CEL's `matches` is RE2 (cel-spec langdef, "Regular expressions"); cel-js runs JavaScript's
// backtracking RegExp, where `^(a+)+$` took 7.8 s on a 31-character tool name (found by a trial).
test('matches runs RE2: its syntax, linear time, and a literal pattern RE2 refuses is a compile error', () => {
  const holds = (when: string, name: string, identity: Identity = alice) =>
    compilePolicy({ default: 'deny', rules: [rule('r', when)] }).decide({ identity, component: tool(name), request: req() }).allowed;
  // RE2's own syntax, which JavaScript's RegExp refuses or reads otherwise: inline flags, \pL.
  assert.equal(holds('component.name.matches("(?i)^ADD$")', 'add'), true);
  assert.equal(holds('component.name.matches("^\\\\pL+$")', 'éa'), true);
  assert.equal(holds('component.name.matches("^\\\\pL+$")', 'a1'), false);
  // A partial match, as RE2's PartialMatch: unanchored patterns match anywhere.
  assert.equal(holds('component.name.matches("dd")', 'add'), true);
  // A pattern with nested quantifiers decides a crafted name (exponential on a backtracking engine).
  assert.equal(holds('!component.name.matches("^(a+)+$")', `${'a'.repeat(64)}!`), true);
  // A pattern a claim carries is compiled when the rule runs, and refused the same way (fail closed).
  assert.equal(holds('component.name.matches(principal.claims.pattern)', 'add', { ...alice, claims: { pattern: '^a(?=d)' } }), false);
  assert.deepEqual(
    configErrors({
      default: 'deny',
      rules: [rule('ok', 'component.name.matches("^a")'), rule('look', 'component.name.startsWith("x") || component.name.matches("^a(?=d)")')],
    }),
    {
      message:
        'Invalid configuration: policy: 1 error: /policy/rules/1/when: invalid RE2 pattern "^a(?=d)": error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
      data: {
        source: 'policy',
        errors: [{ path: '/policy/rules/1/when', message: 'invalid RE2 pattern "^a(?=d)": error parsing regexp: invalid or unsupported Perl syntax: `(?=`' }],
      },
    },
  );
  // Type errors still name `matches`, as the rule spells it.
  assert.deepEqual(configErrors({ default: 'deny', rules: [rule('t', 'component.name.matches(1)')] }), {
    message: "Invalid configuration: policy: 1 error: /policy/rules/0/when: found no matching overload for 'string.matches(int)' (at character 1)",
    data: { source: 'policy', errors: [{ path: '/policy/rules/0/when', message: "found no matching overload for 'string.matches(int)' (at character 1)" }] },
  });
});

test('remembered decisions: one identity asking about inputs that differ in one string each gets each its own decision, also past the bound', () => {
  // A rule on every one of the six strings a decision is remembered by: each variant differs from
  // the first in one of them and is denied by its own rule.
  const p = compilePolicy({
    default: 'allow',
    rules: [
      rule('kind', 'component.kind == "prompt"', 'deny'),
      rule('name', 'component.name == "other"', 'deny'),
      rule('upstream', 'component.upstream == "gh"', 'deny'),
      rule('method', 'request.method == "prompts/get"', 'deny'),
      rule('era', 'request.era == "2025-03-26"', 'deny'),
      rule('mount', 'request.mount == "public"', 'deny'),
    ],
  });
  const variants: Array<[Component, PolicyRequest, string | undefined]> = [
    [tool('echo'), req(), undefined],
    [{ kind: 'prompt', name: 'echo', upstream: 'demo' }, req(), 'kind'],
    [tool('other'), req(), 'name'],
    [tool('echo', 'gh'), req(), 'upstream'],
    [tool('echo'), req('prompts/get'), 'method'],
    [tool('echo'), req('tools/call', '2025-03-26'), 'era'],
    [tool('echo'), req('tools/call', '2026-07-28', 'public'), 'mount'],
  ];
  const ask = () =>
    variants.map(([component, request]) => {
      const d = p.decide({ identity: alice, component, request });
      return d.allowed ? undefined : d.rule;
    });
  const expected = variants.map(([, , rule]) => rule);
  assert.deepEqual(ask(), expected);
  // Asked again (remembered): the same decisions.
  assert.deepEqual(ask(), expected);
  // Past the bound (the memory is emptied, then filled again): still the same decisions.
  for (let i = 0; i <= MAX_DECISIONS_PER_PRINCIPAL; i++) p.decide({ identity: alice, component: tool(`t${i}`), request: req() });
  assert.deepEqual(ask(), expected);
  assert.deepEqual(ask(), expected);
});
