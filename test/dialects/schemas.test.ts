// What each dialect puts on the wire validates against the official JSON schema of its era
// (src/strict/schemas: verbatim copies of schema/<rev>/schema.json).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, openSse, post } from '../helpers/http.js';
import { schemaOf as validator } from '../helpers/schemas.js';

test('2026-07-28 results, input_required, listen acknowledgement and errors validate', async (t) => {
  const check = validator('2026-07-28');
  const gw = await gateway(t);
  const result = async (method: string, params: Record<string, unknown> = {}, name?: string, caps: Record<string, unknown> = {}) => {
    const r = await post(gw.url, modernBody(1, method, params, caps), modernHeaders(method, name));
    assert.equal(r.status, 200, r.text);
    check('JSONRPCResultResponse', r.json);
    return (r.json as { result: unknown }).result;
  };
  check('DiscoverResult', await result('server/discover'));
  check('ListToolsResult', await result('tools/list'));
  check('ListResourcesResult', await result('resources/list'));
  check('ListResourceTemplatesResult', await result('resources/templates/list'));
  check('ReadResourceResult', await result('resources/read', { uri: 'demo://readme' }, 'demo://readme'));
  check('ListPromptsResult', await result('prompts/list'));
  check('GetPromptResult', await result('prompts/get', { name: 'greeting', arguments: { name: 'Ada' } }, 'greeting'));
  check('CompleteResult', await result('completion/complete', { ref: { type: 'ref/prompt', name: 'greeting' }, argument: { name: 'name', value: 'A' } }));
  check('CallToolResult', await result('tools/call', { name: 'echo', arguments: { message: 'x' } }, 'echo'));
  check('InputRequiredResult', await result('tools/call', { name: 'ask', arguments: {} }, 'ask', { elicitation: {} }));

  const v999 = await post(
    gw.url,
    {
      ...modernBody(2, 'tools/list'),
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0', 'io.modelcontextprotocol/clientCapabilities': {} } },
    },
    { ...modernHeaders('tools/list'), 'mcp-protocol-version': 'v999.0.0' },
  );
  check('JSONRPCErrorResponse', v999.json);
  check('UnsupportedProtocolVersionError', v999.json);
  const mismatch = await post(gw.url, modernBody(3, 'tools/list'), { ...modernHeaders('tools/list'), 'mcp-method': 'TOOLS/LIST' });
  check('HeaderMismatchError', mismatch.json);
  const needCap = await post(gw.url, modernBody(4, 'tools/call', { name: 'ask', arguments: {} }), modernHeaders('tools/call', 'ask'));
  check('MissingRequiredClientCapabilityError', needCap.json);

  const listen = await openSse(
    gw.url,
    'POST',
    modernHeaders('subscriptions/listen'),
    JSON.stringify(modernBody('L', 'subscriptions/listen', { notifications: { toolsListChanged: true, resourceSubscriptions: ['demo://readme'] } })),
  );
  t.after(() => listen.close());
  check('SubscriptionsAcknowledgedNotification', JSON.parse((await listen.next()).data));
  await post(gw.url, modernBody(5, 'tools/call', { name: 'touch', arguments: { uri: 'demo://readme' } }), modernHeaders('tools/call', 'touch'));
  check('ResourceUpdatedNotification', JSON.parse((await listen.next()).data));

  const progress = await openSse(
    gw.url,
    'POST',
    modernHeaders('tools/call', 'slow'),
    JSON.stringify(modernBody(6, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 0 }, _meta: { progressToken: 'p' } })),
  );
  check('ProgressNotification', JSON.parse((await progress.next()).data));
  check('JSONRPCResultResponse', JSON.parse((await progress.next()).data));
});

for (const rev of ['2025-03-26', '2025-06-18', '2025-11-25']) {
  test(`${rev} initialize, results and the elicitation request validate`, async (t) => {
    const check = validator(rev);
    const gw = await gateway(t);
    const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await post(
      gw.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: rev, capabilities: { elicitation: {} }, clientInfo: { name: 't', version: '1' } },
      },
      H,
    );
    check('InitializeResult', (init.json as { result: unknown }).result);
    const sh = { ...H, 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': rev };
    const tools = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sh);
    check('ListToolsResult', (tools.json as { result: unknown }).result);
    const call = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, sh);
    check('CallToolResult', (call.json as { result: unknown }).result);
    const missing = await post(gw.url, { jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'demo://nope' } }, sh);
    check(rev === '2025-11-25' ? 'JSONRPCErrorResponse' : 'JSONRPCError', missing.json);
    if (rev !== '2025-03-26') {
      const s = await openSse(gw.url, 'POST', sh, JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'ask', arguments: {} } }));
      t.after(() => s.close());
      let ev = await s.next();
      if (ev.data === '') ev = await s.next();
      check('ElicitRequest', JSON.parse(ev.data));
    }
  });
}

test('2024-11-05 initialize and results validate', async (t) => {
  const check = validator('2024-11-05');
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const base = gw.url.replace(/\/mcp$/, '');
  const sse = await openSse(`${base}/sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  const endpoint = await sse.next();
  const H = { 'content-type': 'application/json' };
  await post(
    new URL(endpoint.data, `${base}/sse`).href,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    H,
  );
  const init = JSON.parse((await sse.next()).data) as { result: unknown };
  check('InitializeResult', init.result);
  await post(new URL(endpoint.data, `${base}/sse`).href, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, H);
  check('ListToolsResult', (JSON.parse((await sse.next()).data) as { result: unknown }).result);
  await post(
    new URL(endpoint.data, `${base}/sse`).href,
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } },
    H,
  );
  const call = JSON.parse((await sse.next()).data) as unknown;
  check('JSONRPCResponse', call);
  check('CallToolResult', (call as { result: unknown }).result);
});
