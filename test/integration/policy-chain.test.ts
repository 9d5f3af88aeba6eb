// Authorization at the component boundary, over the real embedded demo upstream: lists show
// exactly what a principal may call, denials are in-band (or indistinguishable from unknown
// names with hideDenied), decisions use the executor's unprefixed component, audit lines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError, toRpcError } from '../../src/core/errors.js';
import type { Identity } from '../../src/core/identity.js';
import { compose, type Component, type Dispatch } from '../../src/core/interceptor.js';
import type { JsonObject } from '../../src/core/message.js';
import type { CoreNotification, RequestContext } from '../../src/core/request.js';
import { createAggregateUpstream } from '../../src/upstreams/aggregate.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';
import { compilePolicy, createPolicyInterceptor, createPolicyNotificationFilter, type PolicyConfig } from '../../src/policy/index.js';
import { recordingLog } from '../helpers/identity.js';
import { demoContext } from '../helpers/request-context.js';

const ISSUER = 'https://issuer.test';
const who = (subject: string, extra: Partial<Identity> = {}): Identity => ({ issuer: ISSUER, subject, scopes: [], claims: {}, source: 'jwt', ...extra });
const bob = who('bob');
const alice = who('alice');
const DEMO_TOOLS = ['echo', 'add', 'slow', 'ask', 'lookup', 'touch'];

/** A context as the executor builds it for one upstream call (test/helpers/request-context.ts). */
function ctxOf(method: string, params: JsonObject, identity: Identity | null, extra: Partial<RequestContext> = {}): RequestContext {
  return demoContext(method, params, { identity, clientInfo: { name: 'policy-test', version: '1.0.0' }, ...extra });
}

async function demoDispatch(): Promise<{ dispatch: Dispatch; demo: ReturnType<typeof createDemoUpstream> }> {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  return { dispatch: (ctx) => demo.request(ctx), demo };
}

async function errorOf(p: Promise<unknown>): Promise<SwitchyardError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SwitchyardError, String(err));
    return err;
  }
  assert.fail('expected a rejection');
}

const NAME_KEY: Record<string, string> = { tools: 'name', prompts: 'name', resources: 'uri', resourceTemplates: 'uriTemplate' };
const names = (res: JsonObject, key = 'tools') => (res[key] as JsonObject[]).map((t) => t[NAME_KEY[key]]);

const NO_ADD_FOR_BOB: PolicyConfig = {
  default: 'allow',
  rules: [{ name: 'no-add-for-bob', effect: 'deny', when: 'principal.sub == "bob" && component.kind == "tool" && component.name == "add"' }],
};

// The demo has no `get-sum`; its summing tool is `add`, so that is the one denied here.
test('a tool denied to bob is absent from his tools/list and refused in-band; alice sees and calls it', async () => {
  const { dispatch } = await demoDispatch();
  const { log, records } = recordingLog();
  const chain = compose(dispatch, [createPolicyInterceptor(compilePolicy(NO_ADD_FOR_BOB), { log })]);

  const bobList = await chain(ctxOf('tools/list', {}, bob));
  assert.deepEqual(names(bobList), ['echo', 'slow', 'ask', 'lookup', 'touch']);
  assert.deepEqual({ ...bobList, tools: undefined }, { tools: undefined, ttlMs: 60_000, cacheScope: 'private' });
  assert.deepEqual(names(await chain(ctxOf('tools/list', {}, alice))), DEMO_TOOLS);

  const denied = await errorOf(chain(ctxOf('tools/call', { name: 'add', arguments: { a: 2, b: 3 } }, bob)));
  assert.equal(denied.code, 'SWY_ERR_POLICY_DENIED');
  assert.equal(denied.status, 200);
  assert.deepEqual(toRpcError(denied), { code: -32010, message: 'Forbidden by policy: tool add', data: { kind: 'tool', name: 'add' } });

  assert.deepEqual(await chain(ctxOf('tools/call', { name: 'add', arguments: { a: 2, b: 3 } }, alice)), {
    content: [{ type: 'text', text: '5' }],
    structuredContent: { sum: 5 },
  });

  assert.deepEqual(
    records.filter((r) => r.msg === 'policy decision'),
    [
      {
        level: 30,
        principal: { sub: 'bob', iss: ISSUER },
        component: { kind: 'tool', name: 'add', upstream: 'demo' },
        method: 'tools/call',
        decision: 'deny',
        rule: 'no-add-for-bob',
        msg: 'policy decision',
      },
      {
        level: 30,
        principal: { sub: 'alice', iss: ISSUER },
        component: { kind: 'tool', name: 'add', upstream: 'demo' },
        method: 'tools/call',
        decision: 'allow',
        rule: null,
        msg: 'policy decision',
      },
    ],
  );
});

test('the audit line follows the log level (built only when written); a denial is a rejection, never a throw out of the chain', async () => {
  const { dispatch } = await demoDispatch();
  const { log, records } = recordingLog();
  const chain = compose(dispatch, [createPolicyInterceptor(compilePolicy(NO_ADD_FOR_BOB), { log })]);
  const call = (who: Identity) => ctxOf('tools/call', { name: 'add', arguments: { a: 2, b: 3 } }, who);
  log.level = 'warn';
  // Called without awaiting: a refusal must come back as a rejected promise, as from an async function.
  const pending = chain(call(bob));
  assert.ok(pending instanceof Promise);
  assert.equal((await errorOf(pending)).code, 'SWY_ERR_POLICY_DENIED');
  assert.deepEqual(await chain(call(alice)), { content: [{ type: 'text', text: '5' }], structuredContent: { sum: 5 } });
  assert.deepEqual(
    records.filter((r) => r.msg === 'policy decision'),
    [],
  );
  // Back at info: the same decisions, each with its line.
  log.level = 'info';
  assert.equal((await errorOf(chain(call(bob)))).code, 'SWY_ERR_POLICY_DENIED');
  await chain(call(alice));
  assert.deepEqual(
    records.filter((r) => r.msg === 'policy decision').map((r) => [r.principal, r.decision, r.rule]),
    [
      [{ sub: 'bob', iss: ISSUER }, 'deny', 'no-add-for-bob'],
      [{ sub: 'alice', iss: ISSUER }, 'allow', null],
    ],
  );
});

test('hideDenied: a denied tool, prompt or resource gets exactly the error an unknown one gets', async () => {
  const { dispatch } = await demoDispatch();
  const { log } = recordingLog();
  const policy = compilePolicy({
    default: 'allow',
    hideDenied: true,
    rules: [{ name: 'bob-sees-little', effect: 'deny', when: 'principal.sub == "bob" && component.name in ["add", "greeting", "demo://readme"]' }],
  });
  const chain = compose(dispatch, [createPolicyInterceptor(policy, { log })]);
  const same = async (denied: RequestContext, unknown: RequestContext, deniedName: string, unknownName: string) => {
    const a = await errorOf(chain(denied));
    const b = await errorOf(chain(unknown));
    assert.equal(a.code, b.code);
    assert.equal(a.status, b.status);
    assert.deepEqual(JSON.parse(JSON.stringify(toRpcError(a)).replaceAll(deniedName, unknownName)), toRpcError(b));
    return toRpcError(a);
  };
  // The unknown names reach the demo, which answers for them: that is the error to match.
  assert.deepEqual(
    await same(ctxOf('tools/call', { name: 'add', arguments: {} }, bob), ctxOf('tools/call', { name: 'nope', arguments: {} }, bob), 'add', 'nope'),
    {
      code: -32602,
      message: 'Invalid params: unknown tool: add',
    },
  );
  assert.deepEqual(
    await same(
      ctxOf('prompts/get', { name: 'greeting', arguments: { name: 'x' } }, bob),
      ctxOf('prompts/get', { name: 'nope', arguments: {} }, bob),
      'greeting',
      'nope',
    ),
    { code: -32602, message: 'Invalid params: unknown prompt: greeting' },
  );
  assert.deepEqual(
    await same(ctxOf('resources/read', { uri: 'demo://readme' }, bob), ctxOf('resources/read', { uri: 'demo://nope' }, bob), 'demo://readme', 'demo://nope'),
    { code: -32602, message: 'Resource not found: demo://readme', data: { uri: 'demo://readme' } },
  );
  assert.deepEqual(names(await chain(ctxOf('tools/list', {}, bob))), ['echo', 'slow', 'ask', 'lookup', 'touch']);
  assert.deepEqual(await chain(ctxOf('resources/list', {}, bob)), { resources: [], ttlMs: 60_000, cacheScope: 'private' });
});

test('the decision uses ctx.component: a tool called under an aggregate prefix is still denied', async () => {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  const aggregate = createAggregateUpstream(new Map([['demo', demo]]), '__', VERSION);
  await aggregate.start();
  const { log, records } = recordingLog();
  const policy = compilePolicy({
    default: 'allow',
    rules: [
      { name: 'no-add-for-bob', effect: 'deny', when: 'principal.sub == "bob" && component.name == "add"' },
      // Rules see the upstream's own names: a prefixed name never matches.
      { name: 'prefixed-never-matches', effect: 'deny', when: 'component.name.startsWith("demo__")' },
    ],
  });
  const chain = compose((ctx) => aggregate.request(ctx), [createPolicyInterceptor(policy, { log })]);
  const component: Component = { kind: 'tool', name: 'add', upstream: 'demo' };
  const call = (identity: Identity) => ctxOf('tools/call', { name: 'demo__add', arguments: { a: 1, b: 2 } }, identity, { component });

  const denied = await errorOf(chain(call(bob)));
  assert.deepEqual(toRpcError(denied), { code: -32010, message: 'Forbidden by policy: tool add', data: { kind: 'tool', name: 'add' } });
  assert.deepEqual(await chain(call(alice)), { content: [{ type: 'text', text: '3' }], structuredContent: { sum: 3 } });
  assert.deepEqual(
    records.filter((r) => r.msg === 'policy decision').map((r) => [r.decision, r.rule, r.component]),
    [
      ['deny', 'no-add-for-bob', component],
      ['allow', null, component],
    ],
  );
});

test('prompts, resources and resource templates: lists filtered, invocations (completion, subscribe included) decided first', async () => {
  const { dispatch } = await demoDispatch();
  const { log } = recordingLog();
  const policy = compilePolicy({
    default: 'deny',
    rules: [
      { name: 'everyone-reads', effect: 'allow', when: 'component.kind == "resource" && request.method == "resources/read"' },
      { name: 'alice-all', effect: 'allow', when: 'principal.sub == "alice"' },
      { name: 'nobody-subscribes', effect: 'deny', when: 'request.method == "resources/subscribe"' },
    ],
  });
  const chain = compose(dispatch, [createPolicyInterceptor(policy, { log })]);

  assert.deepEqual(await chain(ctxOf('prompts/list', {}, bob)), { prompts: [], ttlMs: 60_000, cacheScope: 'private' });
  assert.deepEqual(names(await chain(ctxOf('prompts/list', {}, alice)), 'prompts'), ['greeting']);
  assert.deepEqual(names(await chain(ctxOf('resources/list', {}, bob)), 'resources'), ['demo://readme']);
  assert.deepEqual(await chain(ctxOf('resources/templates/list', {}, bob)), { resourceTemplates: [], ttlMs: 60_000, cacheScope: 'private' });
  assert.deepEqual(names(await chain(ctxOf('resources/templates/list', {}, alice)), 'resourceTemplates'), ['demo://items/{id}']);

  const promptRef = { ref: { type: 'ref/prompt', name: 'greeting' }, argument: { name: 'name', value: 'A' } };
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('completion/complete', promptRef, bob)))), {
    code: -32010,
    message: 'Forbidden by policy: prompt greeting',
    data: { kind: 'prompt', name: 'greeting' },
  });
  assert.deepEqual(await chain(ctxOf('completion/complete', promptRef, alice)), {
    completion: { values: ['Ada', 'Alan', 'Alonzo'], total: 3, hasMore: false },
  });
  const templateRef = { ref: { type: 'ref/resource', uri: 'demo://items/{id}' }, argument: { name: 'id', value: 'g' } };
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('completion/complete', templateRef, bob)))), {
    code: -32010,
    message: 'Forbidden by policy: resource-template demo://items/{id}',
    data: { kind: 'resource-template', name: 'demo://items/{id}' },
  });
  assert.deepEqual(await chain(ctxOf('resources/read', { uri: 'demo://items/alpha' }, bob)), {
    contents: [{ uri: 'demo://items/alpha', mimeType: 'application/json', text: '{"id":"alpha","length":5}' }],
    ttlMs: 0,
    cacheScope: 'private',
  });
  // Refused before the upstream (the demo has no resources/subscribe and would answer -32601).
  assert.equal((await errorOf(chain(ctxOf('resources/subscribe', { uri: 'demo://readme' }, alice)))).code, 'SWY_ERR_POLICY_DENIED');
  assert.equal((await errorOf(chain(ctxOf('resources/unsubscribe', { uri: 'demo://readme' }, alice)))).code, 'SWY_ERR_REQ_METHOD_NOT_FOUND');
});

test('an invocation that names nothing is refused with -32602, not passed on undecided', async () => {
  const { dispatch } = await demoDispatch();
  const chain = compose(dispatch, [createPolicyInterceptor(compilePolicy({ default: 'allow' }), { log: recordingLog().log })]);
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 42 }, alice)))), {
    code: -32602,
    message: 'Invalid params: tools/call needs a string name',
  });
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('completion/complete', { ref: { type: 'ref/other' }, argument: { name: 'a', value: '' } }, alice)))), {
    code: -32602,
    message: 'Invalid params: completion/complete needs a ref of type ref/prompt (string name) or ref/resource (string uri)',
  });
});

test('fail closed: a rule that errors matches as deny, not as allow, and is logged once', async () => {
  const { dispatch } = await demoDispatch();
  const { log, records } = recordingLog();
  const policy = compilePolicy({
    default: 'allow',
    rules: [
      { name: 'free-tier-no-slow', effect: 'deny', when: 'principal.claims.tier == "free" && component.name == "slow"' },
      { name: 'admins-add', effect: 'allow', when: 'principal.claims.admin == true' },
      { name: 'only-admins-add', effect: 'deny', when: 'component.name == "add" && !("admin" in principal.claims)' },
    ],
  });
  const chain = compose(dispatch, [createPolicyInterceptor(policy, { log })]);
  // bob has no `tier` claim: the deny rule cannot evaluate, so it denies.
  assert.deepEqual(names(await chain(ctxOf('tools/list', {}, bob))), ['echo', 'ask', 'lookup', 'touch']);
  assert.equal((await errorOf(chain(ctxOf('tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 0 } }, bob)))).code, 'SWY_ERR_POLICY_DENIED');
  const paid = who('carol', { claims: { tier: 'paid', admin: true } });
  assert.deepEqual(names(await chain(ctxOf('tools/list', {}, paid))), DEMO_TOOLS);
  assert.deepEqual(
    records.filter((r) => r.msg === 'policy rule failed to evaluate'),
    [
      // CEL absorbs an error when the other side of && decides: the tier rule fails first on slow.
      { level: 40, rule: 'admins-add', effect: 'allow', error: 'No such key: admin (at character 18)', msg: 'policy rule failed to evaluate' },
      { level: 40, rule: 'free-tier-no-slow', effect: 'deny', error: 'No such key: tier (at character 18)', msg: 'policy rule failed to evaluate' },
    ],
  );
});

test('the notification filter drops resources/updated for a resource the subscriber may not read', async (t) => {
  const { dispatch, demo } = await demoDispatch();
  const policy = compilePolicy({
    default: 'allow',
    rules: [{ name: 'bob-no-items', effect: 'deny', when: 'principal.sub == "bob" && component.name.startsWith("demo://items/")' }],
  });
  const filter = createPolicyNotificationFilter(policy, { upstream: 'demo' });
  const got: Record<string, string[]> = { bob: [], alice: [] };
  const deliver = (identity: Identity) => (n: CoreNotification) => {
    const out = filter({ identity, mount: 'default', dialect: '2026-07-28' }, n);
    if (out) got[identity.subject].push(String(out.params.uri));
  };
  const uris = ['demo://readme', 'demo://items/alpha'];
  const subs = [demo.subscribe({ resourceSubscriptions: uris }, deliver(bob)), demo.subscribe({ resourceSubscriptions: uris }, deliver(alice))];
  t.after(() => subs.forEach((s) => s.close()));
  for (const uri of uris) await dispatch(ctxOf('tools/call', { name: 'touch', arguments: { uri } }, alice));
  assert.deepEqual(got, { bob: ['demo://readme'], alice: ['demo://readme', 'demo://items/alpha'] });
  const listChanged = { method: 'notifications/tools/list_changed', params: {} };
  assert.equal(filter({ identity: bob, mount: 'default', dialect: '2026-07-28' }, listChanged), listChanged);
  const unknownSource = createPolicyNotificationFilter(policy, { upstream: () => undefined });
  assert.equal(
    unknownSource(
      { identity: alice, mount: 'default', dialect: '2026-07-28' },
      { method: 'notifications/resources/updated', params: { uri: 'demo://readme' } },
    ),
    null,
  );
});
