// Client era × upstream era: every client kind against every kind of upstream, through one
// gateway per upstream. In each cell: list tools, call one, progress, cancellation, and a
// server-to-client request (elicitation) where the upstream makes one.
// docs/compatibility.md shows this matrix as tested.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { GatewayOptions } from '../../src/gateway.js';
import { CLIENT_KINDS, connect, progressOk, type ClientKind } from '../helpers/clients.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { everythingHttp, modernHttp } from '../helpers/servers.js';

interface UpstreamSpec {
  name: string;
  start(t: { after(fn: () => void | Promise<void>): void }): Promise<Partial<GatewayOptions>>;
  echo: string;
  progress: { name: string; args: Record<string, unknown>; long: Record<string, unknown>; steps: number };
  ask?: { name: string; expect: RegExp; skip?: ClientKind[] };
}

/** elicitation/create does not exist before 2025-06-18, so a 2024-11-05 client is never sent one. */
const NO_ELICITATION_2024 = 'elicitation/create does not exist in 2024-11-05';

// 100 ms steps for the call whose progress is checked: the v1 SDK drops every progress update it
// reads in the same chunk as the response (progressOk), and with 20 ms steps a run at load 13 read
// all three with it (v1-sse-2024: `progress []`). 50 ms steps for the one cancelled at its second
// progress, which still lasts 10 s, longer than the wait for in-flight work to end below
// (durations in seconds, as server-everything takes them).
const everythingTools = {
  echo: 'echo',
  progress: { name: 'trigger-long-running-operation', args: { duration: 0.3, steps: 3 }, long: { duration: 10, steps: 200 }, steps: 3 },
  ask: { name: 'trigger-elicitation-request', expect: /User provided the requested information/ },
};

const UPSTREAMS: UpstreamSpec[] = [
  {
    name: 'embedded demo',
    start: async () => ({}),
    echo: 'echo',
    progress: { name: 'slow', args: { steps: 3, stepMs: 100 }, long: { steps: 100, stepMs: 50 }, steps: 3 },
    ask: { name: 'ask', expect: /^Hello, Ada!$/ },
  },
  {
    name: 'server-everything stdio (2025-11-25)',
    // The cancelled long operations run on in the child and keep it alive after its stdin closes: a
    // short stop step, so that the teardown's close does not wait the default 2 s before SIGTERM.
    start: async () => ({ stdio: everythingStdioCommand(), limits: { ...DEFAULT_LIMITS, upstreamStopTimeoutMs: 200 } }),
    ...everythingTools,
  },
  { name: 'server-everything sse (2024-11-05 HTTP)', start: async (t) => ({ upstreamUrl: (await everythingHttp(t, 'sse')).url }), ...everythingTools },
  {
    name: 'server-everything streamableHttp (2025 HTTP)',
    start: async (t) => ({ upstreamUrl: (await everythingHttp(t, 'streamableHttp')).url }),
    ...everythingTools,
  },
  {
    name: 'v2 stateless server (2026-07-28 HTTP)',
    start: async (t) => ({ upstreamUrl: (await modernHttp(t)).url }),
    echo: 'echo',
    progress: { name: 'slow', args: { steps: 3, delayMs: 100 }, long: { steps: 100, delayMs: 50 }, steps: 3 },
    ask: { name: 'confirm', expect: /^Hello, Ada!$/ },
  },
];

for (const up of UPSTREAMS) {
  test(`every client era through the gateway to ${up.name}`, async (t) => {
    const gw = await gateway(t, { ...(await up.start(t)), dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
    for (const kind of CLIENT_KINDS) {
      await t.test(kind, async () => {
        const client = await connect(kind, gw.url, { name: 'Ada' });
        try {
          const { tools } = await client.listTools();
          assert.ok(tools.some((x) => x.name === up.echo));

          const echo = await client.callTool({ name: up.echo, arguments: { message: kind } });
          assert.deepEqual(echo.content, [{ type: 'text', text: `Echo: ${kind}` }]);

          const seen: number[] = [];
          await client.callTool({ name: up.progress.name, arguments: up.progress.args }, { onprogress: (p) => seen.push(p.progress) });
          assert.ok(progressOk(kind, seen, up.progress.steps), `progress ${JSON.stringify(seen)}`);

          const ac = new AbortController();
          await assert.rejects(
            client.callTool(
              { name: up.progress.name, arguments: up.progress.long },
              { signal: ac.signal, onprogress: (p) => p.progress >= 2 && ac.abort('stop') },
            ),
          );
          for (let i = 0; i < 200 && gw.executor.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
          assert.equal(gw.executor.inFlight, 0);

          // An upstream session opened for a 2024-11-05 client declares no elicitation (the
          // method does not exist in that revision), so a server may not even offer the tool.
          const askListed = up.ask !== undefined && tools.some((x) => x.name === up.ask!.name);
          if (up.ask && !askListed) assert.equal(kind, 'v1-sse-2024', `${up.ask.name} not listed`);
          else if (up.ask && !up.ask.skip?.includes(kind) && kind === 'v1-sse-2024') {
            // A legacy upstream's elicitation is answered -32601 (its tool reports that); an
            // input_required result the gateway would have to ask for fails the client's call.
            const outcome = await client.callTool({ name: up.ask.name, arguments: {} }).then(
              (r) => String(r.content?.[0]?.text),
              (err: Error) => err.message,
            );
            assert.ok(
              outcome === `MCP error -32601: Method not found: ${NO_ELICITATION_2024}` ||
                outcome === `MCP error -32602: Client cannot answer the server's input request: ${NO_ELICITATION_2024}`,
              outcome,
            );
            assert.equal(client.elicitations.length, 0);
          } else if (up.ask && !up.ask.skip?.includes(kind)) {
            const r = await client.callTool({ name: up.ask.name, arguments: {} });
            assert.match(String(r.content?.[0]?.text), up.ask.expect);
            assert.equal(client.elicitations.length, 1);
          }
        } finally {
          await client.close();
        }
      });
    }
  });
}
