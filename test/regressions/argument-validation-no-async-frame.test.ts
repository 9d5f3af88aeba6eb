// Argument validation is on by default, so its two interceptors (the validator in
// src/policy/arguments.ts and the list-changed `watching` stage in src/policy/wire.ts) wrap every
// request of every upstream. Both were async functions: each request paid two async functions'
// promises and awaits before it reached the upstream, though a call whose tool list is fresh is
// checked without waiting for anything (found by review: the request hot path must add no async
// frames). Now the upstream's own promise comes back through both, and only a call that must
// read the tool list first waits for it. Counted with async_hooks (promises these stages make,
// not the upstream), over the real embedded demo; the answers and the refusal are checked too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compose } from '../../src/core/interceptor.js';
import { SwitchyardError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/message.js';
import { createPolicyWiring } from '../../src/policy/wire.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';
import { demoContext, promiseCounting } from '../helpers/request-context.js';

const ctxOf = (method: string, params: JsonObject) => demoContext(method, params, { clientInfo: { name: 'argument-validation-test', version: '1.0.0' } });

test('argument validation (on by default): with a fresh tool list, a call gets the upstream promise itself through both of its stages, and invalid arguments are refused', async (t) => {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  t.after(() => demo.close());
  const counting = promiseCounting((ctx) => demo.request(ctx));
  const watched: string[] = [];
  const warnings: string[] = [];
  const wiring = await createPolicyWiring(
    { upstreams: { demo: {} } },
    { log: { info() {}, warn: (_o, msg) => void warnings.push(msg) }, watchTools: (u) => void watched.push(u) },
  );
  const stages = wiring.interceptorsFor('demo');
  assert.equal(stages.length, 2, 'the validator and its list-changed watch');
  const dispatch = compose(counting.counted, stages);
  const call = (ctx: ReturnType<typeof ctxOf>) => counting.count(dispatch, ctx);

  // The first call reads the tool list (through the same chain), and is checked against it.
  const first = await call(ctxOf('tools/call', { name: 'echo', arguments: { message: 'one' } }));
  assert.deepEqual(first.result.content, [{ type: 'text', text: 'Echo: one' }]);
  assert.deepEqual(watched, ['demo']);

  // Now the list is fresh: no promise of these stages' own, the upstream's comes back.
  const second = await call(ctxOf('tools/call', { name: 'echo', arguments: { message: 'two' } }));
  assert.deepEqual([second.same, second.made], [true, 0]);
  assert.deepEqual(second.result.content, [{ type: 'text', text: 'Echo: two' }]);

  // Another method is passed on as it is.
  const list = await call(ctxOf('tools/list', {}));
  assert.deepEqual([list.same, list.made], [true, 0]);

  // Invalid arguments: refused as a rejection (not a synchronous throw), the upstream not called.
  counting.forget();
  let p: Promise<JsonObject> | undefined;
  assert.doesNotThrow(() => (p = dispatch(ctxOf('tools/call', { name: 'echo', arguments: { message: 42 } }))));
  await assert.rejects(p!, (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_POLICY_ARGUMENTS');
  assert.equal(counting.last(), undefined);
  assert.deepEqual(warnings, []);
});
