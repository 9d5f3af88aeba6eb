// Every client era against the embedded demo: list, echo, progress, cancellation, input.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { CLIENT_KINDS, connect, progressOk } from '../helpers/clients.js';

for (const kind of CLIENT_KINDS) {
  test(`${kind} client through the gateway to the embedded demo`, async (t) => {
    const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
    const client = await connect(kind, gw.url);
    t.after(() => client.close());

    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((x) => x.name),
      ['echo', 'add', 'slow', 'ask', 'lookup', 'touch'],
    );

    const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'Echo: hello' }]);

    const progress: number[] = [];
    const done = await client.callTool({ name: 'slow', arguments: { steps: 3, stepMs: 100 } }, { onprogress: (p) => progress.push(p.progress) });
    assert.deepEqual(done.content, [{ type: 'text', text: 'Finished 3 steps.' }]);
    assert.ok(progressOk(kind, progress, 3), `progress ${JSON.stringify(progress)}`);

    const ac = new AbortController();
    const seen: number[] = [];
    await assert.rejects(
      client.callTool(
        { name: 'slow', arguments: { steps: 100, stepMs: 50 } },
        {
          signal: ac.signal,
          onprogress: (p) => {
            seen.push(p.progress);
            if (p.progress === 2) ac.abort('stop');
          },
        },
      ),
    );
    // Cancellation reaches the core: the request stops running and no more progress comes.
    for (let i = 0; i < 100 && gw.executor.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(gw.executor.inFlight, 0);
    const count = seen.length;
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(seen.length, count);

    if (kind === 'v1-sse-2024') {
      // elicitation/create does not exist before 2025-06-18: never sent to a 2024-11-05 client,
      // whose call gets the input-unsupported error instead.
      await assert.rejects(client.callTool({ name: 'ask', arguments: { question: 'Who are you?' } }), {
        code: -32602,
        message: "MCP error -32602: Client cannot answer the server's input request: elicitation/create does not exist in 2024-11-05",
      });
      assert.equal(client.elicitations.length, 0);
      return;
    }
    const asked = await client.callTool({ name: 'ask', arguments: { question: 'Who are you?' } });
    assert.deepEqual(asked.content, [{ type: 'text', text: 'Hello, Ada!' }]);
    assert.equal(client.elicitations.length, 1);
    assert.equal((client.elicitations[0] as { message: string }).message, 'Who are you?');
  });
}
