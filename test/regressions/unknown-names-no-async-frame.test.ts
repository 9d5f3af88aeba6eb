// The unknown-names interceptor (src/policy/unknown-names.ts), on every curated or hideDenied
// upstream, was an async function: every tools/call, prompts/get and resources/read it wrapped,
// and every other method it only passed on, paid an async function's own promise and an await
// (found by review: the request hot path must add no async frames). Now a method it does not
// concern gets the next stage's promise itself, and a call the upstream has settles in one
// reaction. Counted with async_hooks (promises the interceptor makes, not the upstream), over the
// real embedded demo upstream; the answers themselves are checked too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { componentOf, type Dispatch } from '../../src/core/interceptor.js';
import type { JsonObject } from '../../src/core/message.js';
import type { RequestContext } from '../../src/core/request.js';
import { createUnknownNameInterceptor } from '../../src/policy/index.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';

function ctxOf(method: string, params: JsonObject): RequestContext {
  return {
    method,
    params,
    protocolVersion: '2026-07-28',
    clientInfo: { name: 'unknown-names-test', version: '1.0.0' },
    clientCapabilities: {},
    logLevel: undefined,
    identity: null,
    mount: 'default',
    dialect: '2026-07-28',
    upstream: 'demo',
    component: componentOf(method, params, 'demo'),
    signal: new AbortController().signal,
    progressToken: undefined,
    onProgress() {},
    onLog() {},
    ask: undefined,
  };
}

test('unknown names: a passed-on method gets the upstream promise itself, and a known tool, prompt or resource costs one promise, no async frame', async (t) => {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  t.after(() => demo.close());
  // The real demo behind it; what it makes is not counted (its own promises are not the interceptor's).
  let inUpstream = false;
  let last: Promise<JsonObject> | undefined;
  const upstream: Dispatch = (ctx) => {
    inUpstream = true;
    try {
      return (last = demo.request(ctx));
    } finally {
      inUpstream = false;
    }
  };
  const dispatch = createUnknownNameInterceptor()(upstream);
  let made = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE' && !inUpstream) made++;
    },
  });
  /** Calls the interceptor once; the promises it made on the way (before anything settles) and its answer. */
  const call = async (ctx: RequestContext): Promise<{ same: boolean; made: number; result: JsonObject }> => {
    made = 0;
    hook.enable();
    let p: Promise<JsonObject>;
    try {
      p = dispatch(ctx);
    } finally {
      hook.disable();
    }
    return { same: p === last, made, result: await p };
  };

  const list = await call(ctxOf('tools/list', {}));
  assert.deepEqual([list.same, list.made], [true, 0]);
  assert.ok(Array.isArray(list.result.tools));

  const echo = await call(ctxOf('tools/call', { name: 'echo', arguments: { message: 'hi' } }));
  assert.deepEqual([echo.same, echo.made], [false, 1]);
  assert.deepEqual(echo.result.content, [{ type: 'text', text: 'Echo: hi' }]);

  const prompt = await call(ctxOf('prompts/get', { name: 'greeting', arguments: { name: 'Ada' } }));
  assert.equal(prompt.made, 1);
  assert.ok(Array.isArray(prompt.result.messages));

  const read = await call(ctxOf('resources/read', { uri: 'demo://readme' }));
  assert.equal(read.made, 1);
  assert.ok(Array.isArray(read.result.contents));
});
