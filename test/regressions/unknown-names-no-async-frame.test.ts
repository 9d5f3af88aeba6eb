// The unknown-names interceptor (src/policy/unknown-names.ts), on every curated or hideDenied
// upstream, was an async function: every tools/call, prompts/get and resources/read it wrapped,
// and every other method it only passed on, paid an async function's own promise and an await
// (found by review: the request hot path must add no async frames). Now a method it does not
// concern gets the next stage's promise itself, and a call the upstream has settles in one
// reaction. Counted with async_hooks (promises the interceptor makes, not the upstream), over the
// real embedded demo upstream; the answers themselves are checked too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../src/core/message.js';
import { createUnknownNameInterceptor } from '../../src/policy/index.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';
import { demoContext, promiseCounting } from '../helpers/request-context.js';

const ctxOf = (method: string, params: JsonObject) => demoContext(method, params, { clientInfo: { name: 'unknown-names-test', version: '1.0.0' } });

test('unknown names: a passed-on method gets the upstream promise itself, and a known tool, prompt or resource costs one promise, no async frame', async (t) => {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  t.after(() => demo.close());
  // The real demo behind it; what it makes is not counted (its own promises are not the interceptor's).
  const counting = promiseCounting((ctx) => demo.request(ctx));
  const dispatch = createUnknownNameInterceptor()(counting.counted);
  const call = (ctx: ReturnType<typeof ctxOf>) => counting.count(dispatch, ctx);

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
