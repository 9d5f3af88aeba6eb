// Every client era through the gateway to @modelcontextprotocol/server-everything over stdio.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { CLIENT_KINDS, connect, progressOk } from '../helpers/clients.js';

for (const kind of CLIENT_KINDS) {
  test(`${kind} client through the gateway to server-everything over stdio`, async (t) => {
    // The cancelled trigger-long-running-operation runs on in the child (it does not stop on
    // notifications/cancelled) and keeps it alive after its stdin closes: a short stop step, so that
    // the teardown's close does not wait the default 2 s before SIGTERM. Nothing here tests the stop.
    const gw = await gateway(t, {
      stdio: everythingStdioCommand(),
      dialects: ['2026-07-28', '2025-03-26', '2024-11-05'],
      limits: { ...DEFAULT_LIMITS, upstreamStopTimeoutMs: 200 },
    });
    assert.equal(gw.upstream.describe().serverInfo.name, 'mcp-servers/everything');
    const client = await connect(kind, gw.url, { name: 'Ada' });
    t.after(() => client.close());

    const { tools } = await client.listTools();
    for (const name of ['echo', 'get-sum', 'trigger-long-running-operation'])
      assert.ok(
        tools.some((x) => x.name === name),
        name,
      );

    const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'Echo: hello' }]);

    const progress: number[] = [];
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, { onprogress: (p) => progress.push(p.progress) });
    assert.ok(progressOk(kind, progress, 3), `progress ${JSON.stringify(progress)}`);

    const ac = new AbortController();
    await assert.rejects(
      client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 50 } },
        {
          signal: ac.signal,
          onprogress: (p) => {
            if (p.progress === 2) ac.abort('stop');
          },
        },
      ),
    );
    for (let i = 0; i < 100 && gw.executor.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(gw.executor.inFlight, 0);

    // A legacy child's server-to-client request reaches every client: 2025-era and HTTP+SSE
    // clients as a real request, 2026-07-28 clients (v2 auto mode finds server/discover and
    // speaks 2026 too) as an input_required round over a held call.
    assert.ok(tools.some((x) => x.name === 'trigger-elicitation-request'));
    const asked = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    if (kind === 'v1-sse-2024') {
      // elicitation/create does not exist before 2025-06-18: the upstream's request is answered
      // -32601 (what a 2024-11-05 client answers an unknown method), never sent to the client.
      assert.equal(asked.content?.[0]?.text, 'MCP error -32601: Method not found: elicitation/create does not exist in 2024-11-05');
      assert.equal(client.elicitations.length, 0);
      return;
    }
    assert.equal(asked.content?.[0]?.text, '✅ User provided the requested information!');
    assert.equal(asked.content?.[1]?.text, 'User inputs:\n- Name: Ada');
    assert.equal(client.elicitations.length, 1);
  });
}
