// A request context for tests that drive interceptors directly over the real embedded demo, and
// a counter of the promises an interceptor chain makes on its own (not the upstream's).

import { createHook } from 'node:async_hooks';
import { componentOf, type Dispatch } from '../../src/core/interceptor.js';
import type { JsonObject } from '../../src/core/message.js';
import type { RequestContext } from '../../src/core/request.js';

/**
 * A 2026-07-28 request context of `method` for the demo upstream on mount `default`, no identity,
 * no client capabilities; `overrides` replaces any of its fields (an identity, the client's name
 * or capabilities). The component is that of `overrides.upstream` when it names another upstream.
 */
export function demoContext(method: string, params: JsonObject, overrides: Partial<RequestContext> = {}): RequestContext {
  const upstream = overrides.upstream ?? 'demo';
  return {
    method,
    params,
    protocolVersion: '2026-07-28',
    clientInfo: { name: 'interceptor-test', version: '1.0.0' },
    clientCapabilities: {},
    logLevel: undefined,
    identity: null,
    mount: 'default',
    dialect: '2026-07-28',
    upstream,
    component: componentOf(method, params, upstream),
    signal: new AbortController().signal,
    progressToken: undefined,
    onProgress() {},
    onLog() {},
    ask: undefined,
    ...overrides,
  };
}

/** One call through a counted chain: whether it returned the upstream's own promise, the promises the chain made before anything settled, and the result. */
export interface CountedCall {
  same: boolean;
  made: number;
  result: JsonObject;
}

/**
 * Wraps `upstream` so that the promises it makes are not counted, and returns `count(dispatch)`:
 * a caller of a chain built on `counted` that counts (async_hooks, `PROMISE` inits) the promises
 * the chain makes while it is being called.
 */
export function promiseCounting(upstream: Dispatch): {
  counted: Dispatch;
  count: (dispatch: Dispatch, ctx: RequestContext) => Promise<CountedCall>;
  last(): Promise<JsonObject> | undefined;
  forget(): void;
} {
  let inUpstream = false;
  let last: Promise<JsonObject> | undefined;
  let made = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE' && !inUpstream) made++;
    },
  });
  const counted: Dispatch = (ctx) => {
    inUpstream = true;
    try {
      return (last = upstream(ctx));
    } finally {
      inUpstream = false;
    }
  };
  return {
    counted,
    async count(dispatch, ctx) {
      made = 0;
      hook.enable();
      let p: Promise<JsonObject>;
      try {
        p = dispatch(ctx);
      } finally {
        hook.disable();
      }
      return { same: p === last, made, result: await p };
    },
    last: () => last,
    forget: () => void (last = undefined),
  };
}
