// Test helper: an initialize-era session with no transport: a real executor over the real embedded
// demo upstream, an interceptor that records the core requests the session builds, and sinks that
// collect what the session would put on the wire.

import type { Sink } from '../../src/core/exchange.js';
import { HeldCalls } from '../../src/core/calls.js';
import { Executor, guardUpstream } from '../../src/core/executor.js';
import type { Interceptor } from '../../src/core/interceptor.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { RpcMessage } from '../../src/core/message.js';
import type { RequestContext } from '../../src/core/request.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { sessionLimits, type SessionDeps } from '../../dialects/2025-03-26/session.js';

/** What a collecting sink received: messages before the response, then the response. */
export interface Collected {
  sink: Sink;
  sent: RpcMessage[];
  finished(): RpcMessage | RpcMessage[] | null | undefined;
}

/** A sink that keeps everything. */
export function collect(): Collected {
  const sent: RpcMessage[] = [];
  let done: RpcMessage | RpcMessage[] | null | undefined;
  return {
    sent,
    finished: () => done,
    sink: {
      send: (m) => {
        sent.push(m);
        return true;
      },
      finish: (m) => void (done = m),
      streaming: false,
    },
  };
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** Session deps for `dialect` over the demo upstream (version `9.9.9`), and the contexts it dispatched. */
export async function sessionHarness(t: { after(fn: () => Promise<unknown>): void }, dialect: string): Promise<{ deps: SessionDeps; seen: RequestContext[] }> {
  const seen: RequestContext[] = [];
  const record: Interceptor = (next) => (ctx) => {
    seen.push(ctx);
    return next(ctx);
  };
  const demo = createDemoUpstream({ version: '9.9.9' });
  await demo.start();
  const upstream = guardUpstream(demo, [record], new HeldCalls(undefined, 16, 60_000), 'demo');
  const executor = new Executor({ mount: 'default', upstream, limits: DEFAULT_LIMITS });
  t.after(() => executor.close(0));
  return { deps: { executor, limits: sessionLimits(DEFAULT_LIMITS), log: quiet, dialect }, seen };
}
