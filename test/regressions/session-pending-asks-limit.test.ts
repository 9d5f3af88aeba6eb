// Regression (a known defect left open, fixed by h-small): a 2025 session's 65th server-to-client
// request awaiting the client's answer (the fixed per-session bound is 64) was refused with
// SWY_ERR_ADMISSION_BUSY, "Server busy: too many requests in flight", which says the whole gateway
// is full, and was not counted as a refusal. It is that one session's bound: it now has its own
// code, SWY_ERR_SESSION_PENDING_LIMIT, whose message names it, answered to the upstream that
// asked (the client is not sent the request), and counted in switchyard_refusals_total and
// /status.json like the other bounds. Real gateway, a stdio upstream that asks `roots/list` once
// per id, a 2025-06-18 client session that declares roots and answers none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { initSession, parseSse, post } from '../helpers/http.js';
import { configGateway, countedRefusals, getText } from '../helpers/ops.js';

const ASKING = path.join(REPO_ROOT, 'test/fixtures/asking-server.mjs');

test(
  'the 65th pending server request of a 2025 session is refused SWY_ERR_SESSION_PENDING_LIMIT, to the upstream, and counted',
  { timeout: 60_000 },
  async (t) => {
    const gw = await configGateway(t, { admin: { port: 0 }, upstreams: { ask: { command: process.execPath, args: [ASKING] } } }, { operations: true });
    const admin = gw.admin!.address().url;
    const headers = await initSession(gw.url, '2025-06-18', { roots: {} });
    const ids = Array.from({ length: 65 }, (_, i) => `r${i}`);
    // The upstream reports what came back within 2 s: the client answers nothing, so only the refusal.
    const res = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask-ids', arguments: { ids, messages: true } } }, headers);
    assert.equal(res.status, 200);
    const messages = parseSse(res.text).map((e) => JSON.parse(e.data) as { id?: unknown; method?: string; result?: { content: Array<{ text: string }> } });
    // The client was sent the 64 the bound admits, and not the 65th.
    assert.deepEqual(messages.filter((m) => m.method === 'roots/list').length, 64);
    const result = messages.find((m) => m.id === 1)!.result!;
    assert.deepEqual(JSON.parse(result.content[0].text), [
      { id: 'r64', code: -32000, message: 'Too many requests: the client has too many server requests awaiting its answers: limit 64' },
    ]);

    const exposition = (await getText(`${admin}metrics`)).text;
    assert.deepEqual(countedRefusals(exposition), [[{ code: 'SWY_ERR_SESSION_PENDING_LIMIT', mount: 'ask', dialect: '2025-03-26' }, 1]]);
    const status = (await getText(`${admin}status.json`)).json as { refusals: Array<Record<string, unknown>> };
    assert.deepEqual(
      status.refusals.map(({ code, status: s, mount, dialect }) => ({ code, status: s, mount, dialect })),
      [{ code: 'SWY_ERR_SESSION_PENDING_LIMIT', status: 429, mount: 'ask', dialect: '2025-03-26' }],
    );
  },
);
