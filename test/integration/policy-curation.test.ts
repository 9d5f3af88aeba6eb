// Curation over the real embedded demo upstream: hidden and renamed tools and prompts in both
// directions, replaced descriptions, hidden resources, and curation in front of policy.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { SwitchyardError, toRpcError } from '../../src/core/errors.js';
import type { Identity } from '../../src/core/identity.js';
import { compose, type Dispatch } from '../../src/core/interceptor.js';
import type { JsonObject } from '../../src/core/message.js';
import type { CoreNotification, RequestContext } from '../../src/core/request.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';
import { demoContext } from '../helpers/request-context.js';
import {
  compilePolicy,
  createCurationInterceptor,
  createCurationNotificationFilter,
  createPolicyInterceptor,
  type UpstreamPolicyConfig,
} from '../../src/policy/index.js';

const bob: Identity = { issuer: 'https://issuer.test', subject: 'bob', scopes: [], claims: {}, source: 'jwt' };

/** A context as the executor builds it for one upstream call. */
/** The demo's 2026-07-28 request context for `identity` (test/helpers/request-context.ts). */
function ctxOf(method: string, params: JsonObject, identity: Identity | null = bob): RequestContext {
  return demoContext(method, params, { identity, clientInfo: { name: 'policy-test', version: '1.0.0' } });
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

const toolNames = (res: JsonObject) => (res.tools as JsonObject[]).map((t) => t.name);
const unknownTool = (name: string) => ({ code: -32602, message: `Invalid params: unknown tool: ${name}` });

test('tools: hidden, renamed (both directions) and redescribed', async () => {
  const { dispatch } = await demoDispatch();
  const upstreams: Record<string, UpstreamPolicyConfig> = {
    demo: { tools: { exclude: ['slow', 'a?k'], rename: { add: 'sum' }, describe: { echo: 'Says it back.', add: 'Sums two numbers.' } } },
  };
  const chain = compose(dispatch, [createCurationInterceptor({ upstreams })]);
  const raw = (await dispatch(ctxOf('tools/list', {}))).tools as JsonObject[];
  const list = await chain(ctxOf('tools/list', {}));
  assert.deepEqual(list, {
    tools: [{ ...raw[0], description: 'Says it back.' }, { ...raw[1], name: 'sum', description: 'Sums two numbers.' }, raw[4], raw[5]],
    ttlMs: 60_000,
    cacheScope: 'public',
  });
  assert.deepEqual(toolNames(list), ['echo', 'sum', 'lookup', 'touch']);

  // The new name reaches the upstream under the old one.
  assert.deepEqual(await chain(ctxOf('tools/call', { name: 'sum', arguments: { a: 2, b: 2 } })), {
    content: [{ type: 'text', text: '4' }],
    structuredContent: { sum: 4 },
  });
  // The old name of a renamed tool, and a hidden tool, are unknown: exactly the demo's own answer for an unknown tool.
  const realUnknown = toRpcError(await errorOf(dispatch(ctxOf('tools/call', { name: 'nope', arguments: {} }))));
  assert.deepEqual(realUnknown, unknownTool('nope'));
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'add', arguments: { a: 1, b: 1 } })))), unknownTool('add'));
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 0 } })))), unknownTool('slow'));
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'ask', arguments: {} })))), unknownTool('ask'));
  assert.deepEqual(await chain(ctxOf('tools/call', { name: 'echo', arguments: { message: 'hi' } })), { content: [{ type: 'text', text: 'Echo: hi' }] });
});

test('tools: include globs, and a rename onto an existing name shadows that tool', async () => {
  const { dispatch } = await demoDispatch();
  const include = compose(dispatch, [createCurationInterceptor({ upstreams: { demo: { tools: { include: ['e*', 'a*'] } } } })]);
  assert.deepEqual(toolNames(await include(ctxOf('tools/list', {}))), ['echo', 'add', 'ask']);
  assert.deepEqual(toRpcError(await errorOf(include(ctxOf('tools/call', { name: 'touch', arguments: { uri: 'x' } })))), unknownTool('touch'));

  const shadow = compose(dispatch, [createCurationInterceptor({ upstreams: { demo: { tools: { rename: { add: 'echo', echo: 'say' } } } } })]);
  assert.deepEqual(toolNames(await shadow(ctxOf('tools/list', {}))), ['say', 'echo', 'slow', 'ask', 'lookup', 'touch']);
  assert.deepEqual(await shadow(ctxOf('tools/call', { name: 'echo', arguments: { a: 1, b: 2 } })), {
    content: [{ type: 'text', text: '3' }],
    structuredContent: { sum: 3 },
  });
  assert.deepEqual(await shadow(ctxOf('tools/call', { name: 'say', arguments: { message: 'x' } })), { content: [{ type: 'text', text: 'Echo: x' }] });
  assert.deepEqual(toRpcError(await errorOf(shadow(ctxOf('tools/call', { name: 'add', arguments: { a: 1, b: 2 } })))), unknownTool('add'));

  const only = compose(dispatch, [createCurationInterceptor({ upstreams: { demo: { tools: { rename: { add: 'echo' } } } } })]);
  // `echo` now names add; the demo's own echo has no name left and is not listed.
  assert.deepEqual(toolNames(await only(ctxOf('tools/list', {}))), ['echo', 'slow', 'ask', 'lookup', 'touch']);
  assert.equal(((await only(ctxOf('tools/list', {}))).tools as JsonObject[])[0].title, 'Add');
});

test('prompts: renamed for prompts/get and completion; the old name is unknown', async () => {
  const { dispatch } = await demoDispatch();
  const chain = compose(dispatch, [
    createCurationInterceptor({ upstreams: { demo: { prompts: { rename: { greeting: 'hello' }, describe: { greeting: 'Says hello.' } } } } }),
  ]);
  const list = await chain(ctxOf('prompts/list', {}));
  assert.deepEqual(
    (list.prompts as JsonObject[]).map((p) => [p.name, p.description]),
    [['hello', 'Says hello.']],
  );
  assert.deepEqual(await chain(ctxOf('prompts/get', { name: 'hello', arguments: { name: 'Ada' } })), {
    description: 'A greeting',
    messages: [{ role: 'user', content: { type: 'text', text: 'Hi, Ada! Please greet me back.' } }],
  });
  assert.deepEqual(await chain(ctxOf('completion/complete', { ref: { type: 'ref/prompt', name: 'hello' }, argument: { name: 'style', value: 'f' } })), {
    completion: { values: ['formal'], total: 1, hasMore: false },
  });
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('prompts/get', { name: 'greeting', arguments: { name: 'Ada' } })))), {
    code: -32602,
    message: 'Invalid params: unknown prompt: greeting',
  });
});

test('resources: hidden URIs and templates read as not found; their updates are dropped', async (t) => {
  const { dispatch, demo } = await demoDispatch();
  const upstreams = { demo: { resources: { exclude: ['demo://items/**'], describe: { 'demo://readme': 'What this is.' } } } };
  const chain = compose(dispatch, [createCurationInterceptor({ upstreams })]);
  assert.deepEqual(await chain(ctxOf('resources/list', {})), {
    resources: [{ uri: 'demo://readme', name: 'readme', title: 'Read me', mimeType: 'text/plain', description: 'What this is.' }],
    ttlMs: 60_000,
    cacheScope: 'public',
  });
  assert.deepEqual(await chain(ctxOf('resources/templates/list', {})), { resourceTemplates: [], ttlMs: 60_000, cacheScope: 'public' });
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('resources/read', { uri: 'demo://items/alpha' })))), {
    code: -32602,
    message: 'Resource not found: demo://items/alpha',
    data: { uri: 'demo://items/alpha' },
  });
  assert.deepEqual(
    toRpcError(
      await errorOf(chain(ctxOf('completion/complete', { ref: { type: 'ref/resource', uri: 'demo://items/{id}' }, argument: { name: 'id', value: '' } }))),
    ),
    {
      code: -32602,
      message: 'Invalid params: unknown resource template: demo://items/{id}',
    },
  );
  assert.equal(((await chain(ctxOf('resources/read', { uri: 'demo://readme' }))).contents as JsonObject[])[0].uri, 'demo://readme');

  const filter = createCurationNotificationFilter({ upstreams, upstream: 'demo' });
  const got: string[] = [];
  const sub = demo.subscribe({ resourceSubscriptions: ['demo://readme', 'demo://items/beta'] }, (n: CoreNotification) => {
    const out = filter({ identity: bob, mount: 'default', dialect: '2026-07-28' }, n);
    if (out) got.push(String(out.params.uri));
  });
  t.after(() => sub.close());
  for (const uri of ['demo://items/beta', 'demo://readme']) await dispatch(ctxOf('tools/call', { name: 'touch', arguments: { uri } }));
  assert.deepEqual(got, ['demo://readme']);
});

test('curation in front of policy: rules see the upstream name, the caller the new one', async () => {
  const { dispatch } = await demoDispatch();
  const log = pino({ level: 'silent' });
  const policy = compilePolicy({
    default: 'allow',
    rules: [{ name: 'no-add-for-bob', effect: 'deny', when: 'principal.sub == "bob" && component.name == "add"' }],
  });
  // compose: the last interceptor is the outermost.
  const chain = compose(dispatch, [
    createPolicyInterceptor(policy, { log }),
    createCurationInterceptor({ upstreams: { demo: { tools: { rename: { add: 'sum' } } } } }),
  ]);
  assert.deepEqual(toolNames(await chain(ctxOf('tools/list', {}))), ['echo', 'slow', 'ask', 'lookup', 'touch']);
  const alice: Identity = { ...bob, subject: 'alice' };
  assert.deepEqual(toolNames(await chain(ctxOf('tools/list', {}, alice))), ['echo', 'sum', 'slow', 'ask', 'lookup', 'touch']);
  // The refusal names the tool as the caller knows it: the old name stays private.
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'sum', arguments: { a: 1, b: 1 } })))), {
    code: -32010,
    message: 'Forbidden by policy: tool sum',
    data: { kind: 'tool', name: 'sum' },
  });
  assert.deepEqual(await chain(ctxOf('tools/call', { name: 'sum', arguments: { a: 1, b: 1 } }, alice)), {
    content: [{ type: 'text', text: '2' }],
    structuredContent: { sum: 2 },
  });

  const hidden = compose(dispatch, [
    createPolicyInterceptor(
      compilePolicy({
        default: 'allow',
        hideDenied: true,
        rules: [{ name: 'no-add-for-bob', effect: 'deny', when: 'principal.sub == "bob" && component.name == "add"' }],
      }),
      {
        log,
      },
    ),
    createCurationInterceptor({ upstreams: { demo: { tools: { rename: { add: 'sum' } } } } }),
  ]);
  assert.deepEqual(toRpcError(await errorOf(hidden(ctxOf('tools/call', { name: 'sum', arguments: { a: 1, b: 1 } })))), unknownTool('sum'));
  assert.deepEqual(toRpcError(await errorOf(hidden(ctxOf('tools/call', { name: 'sum2', arguments: {} })))), unknownTool('sum2'));
});

test('bad curation config lists every failing path', () => {
  try {
    createCurationInterceptor({
      upstreams: {
        demo: { tools: { rename: { add: 'x', echo: 'x' }, hide: ['a'] } as never, prompts: { include: [''] } },
        'a/b': { resources: { rename: {} } as never },
      },
    });
    assert.fail('expected a config error');
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    assert.deepEqual(err.data, {
      source: 'policy',
      errors: [
        { path: '/upstreams/demo/tools/hide', message: 'unknown key' },
        { path: '/upstreams/demo/prompts/include/0', message: 'must NOT have fewer than 1 characters' },
        { path: '/upstreams/a~1b/resources/rename', message: 'unknown key' },
      ],
    });
  }
  try {
    createCurationInterceptor({ upstreams: { demo: { tools: { rename: { add: 'x', echo: 'x' } } } } });
    assert.fail('expected a config error');
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    assert.deepEqual(err.data, { source: 'policy', errors: [{ path: '/upstreams/demo/tools/rename/echo', message: 'renames to x, as add does' }] });
  }
});
