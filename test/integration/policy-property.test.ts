// Property, over the real embedded demo upstream: for random rules, curation and principals,
// every tool in the filtered list can be called, and every tool left out of it is refused.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import pino from 'pino';
import { SwitchyardError } from '../../src/core/errors.js';
import type { Identity } from '../../src/core/identity.js';
import { compose } from '../../src/core/interceptor.js';
import type { JsonObject } from '../../src/core/message.js';
import type { RequestContext } from '../../src/core/request.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';
import { compilePolicy, createCurationInterceptor, createPolicyInterceptor, type ComponentCuration, type PolicyConfig } from '../../src/policy/index.js';
import { demoContext } from '../helpers/request-context.js';

const TOOLS = ['echo', 'add', 'slow', 'ask', 'lookup', 'touch'] as const;
type Tool = (typeof TOOLS)[number];
/** Arguments each demo tool answers quickly and without error. */
const ARGS: Record<Tool, JsonObject> = {
  echo: { message: 'x' },
  add: { a: 1, b: 2 },
  slow: { steps: 1, stepMs: 0 },
  ask: {},
  lookup: { region: 'eu', key: 'k' },
  touch: { uri: 'demo://readme' },
};
/** The demo's titles tell which tool a (possibly renamed) list item is. */
const BY_TITLE: Record<string, Tool> = {
  Echo: 'echo',
  Add: 'add',
  'Slow operation': 'slow',
  'Ask the user': 'ask',
  'Lookup by region': 'lookup',
  'Touch a resource': 'touch',
};
const EXTRA_NAMES = ['x1', 'x2', 'x3', 'x4', 'x5', 'x6'];

/** The demo's 2026-07-28 request context for `identity` (test/helpers/request-context.ts); `ask` answers with an input_required round when elicitation is declared. */
function ctxOf(method: string, params: JsonObject, identity: Identity | null): RequestContext {
  return demoContext(method, params, { identity, clientInfo: { name: 'policy-test', version: '1.0.0' }, clientCapabilities: { elicitation: {} } });
}

const atom = fc.oneof(
  fc.constantFrom(...TOOLS).map((t) => `component.name == "${t}"`),
  fc.constantFrom('alice', 'bob', 'carol').map((s) => `principal.sub == "${s}"`),
  fc.constantFrom('read', 'write', 'admin').map((s) => `"${s}" in principal.scopes`),
  fc.constantFrom('a', 'e', 's', 't', 'l').map((p) => `component.name.startsWith("${p}")`),
  // Fails to evaluate for principals without the claim: exercises fail-closed.
  fc.constantFrom('free', 'paid').map((v) => `principal.claims.tier == "${v}"`),
  fc.constant('request.method == "tools/call"'),
  fc.constant('component.kind == "tool" && component.upstream == "demo"'),
);
const expr = fc
  .tuple(fc.array(fc.tuple(atom, fc.boolean()), { minLength: 1, maxLength: 3 }), fc.constantFrom(' && ', ' || '))
  .map(([parts, op]) => parts.map(([a, not]) => (not ? `!(${a})` : `(${a})`)).join(op));
const policyArb: fc.Arbitrary<PolicyConfig> = fc.record({
  default: fc.constantFrom('allow' as const, 'deny' as const),
  hideDenied: fc.boolean(),
  rules: fc
    .array(fc.tuple(fc.constantFrom('allow' as const, 'deny' as const), expr), { maxLength: 5 })
    .map((rs) => rs.map(([effect, when], i) => ({ name: `r${i}`, effect, when }))),
});
const renameArb = fc
  .subarray([...TOOLS])
  .chain((keys) =>
    fc
      .shuffledSubarray([...TOOLS, ...EXTRA_NAMES], { minLength: keys.length, maxLength: keys.length })
      .map((to) => Object.fromEntries(keys.map((k, i) => [k, to[i]]))),
  );
const curationArb: fc.Arbitrary<ComponentCuration> = fc.record(
  {
    include: fc.subarray(['e*', 'a*', '*o*', 's*', 't*', 'lookup']),
    exclude: fc.subarray([...TOOLS], { maxLength: 2 }),
    rename: renameArb,
  },
  { requiredKeys: [] },
);
const principalArb: fc.Arbitrary<Identity | null> = fc.option(
  fc.record({
    issuer: fc.constant('https://issuer.test'),
    subject: fc.constantFrom('alice', 'bob', 'carol'),
    scopes: fc.subarray(['read', 'write', 'admin']),
    claims: fc.option(fc.record({ tier: fc.constantFrom('free', 'paid') }), { nil: undefined }).map((c) => c ?? {}),
    source: fc.constant('jwt' as const),
  }),
  { nil: null },
);

test('for random rules, curation and principals: listed tools are callable, unlisted ones are refused', async () => {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  const log = pino({ level: 'silent' });
  await fc.assert(
    fc.asyncProperty(policyArb, curationArb, principalArb, async (policyConfig, curation, principal) => {
      const policy = compilePolicy(policyConfig);
      const chain = compose(
        (ctx) => demo.request(ctx),
        [createPolicyInterceptor(policy, { log }), createCurationInterceptor({ upstreams: { demo: { tools: curation } } })],
      );
      const listed = (await chain(ctxOf('tools/list', {}, principal))).tools as JsonObject[];
      const visible = new Set(listed.map((t) => t.name as string));
      assert.equal(visible.size, listed.length, 'names in a list are unique');
      for (const item of listed) {
        const tool = BY_TITLE[item.title as string];
        await chain(ctxOf('tools/call', { name: item.name, arguments: ARGS[tool] }, principal));
      }
      const candidates = new Set<string>([...TOOLS, ...Object.values(curation.rename ?? {})]);
      for (const name of candidates) {
        if (visible.has(name)) continue;
        const args = (TOOLS as readonly string[]).includes(name) ? ARGS[name as Tool] : {};
        await assert.rejects(chain(ctxOf('tools/call', { name, arguments: args }, principal)), (err: unknown) => {
          assert.ok(err instanceof SwitchyardError);
          if (err.code === 'SWY_ERR_POLICY_DENIED') assert.equal(policy.hideDenied, false, 'hideDenied never says denied');
          else assert.equal(err.message, `Invalid params: unknown tool: ${name}`);
          return true;
        });
      }
    }),
    { numRuns: 150 },
  );
});
